import createDebug from '../debug.js';
import { TypedEmitter } from '../emitter.js';
import type { MessageQueue } from '../../protocol/index.js';
import { ProducerMetrics, resolveMeter, type MetricsOptions } from '../metrics/index.js';
import {
  RemotingEventRelay,
  type ConnectionEvent,
  type RemotingClientEvents,
  type RequestTimeoutEvent,
} from '../remoting/events.js';
import type { RemotingClient } from '../remoting/index.js';
import type { SendStatus } from './send-result.js';

const log = createDebug('rocketwire:producer');

// Typed instrumentation events of the producer (KafkaJS's producer.events) and the send path's
// hooks for them and for the metrics (lib/metrics). With no listener and metrics off, a send pays
// two boolean checks.

/**
 * The names of a Producer's events: `producer.on(ProducerEvents.SEND, (e) => …)`.
 * @category Producing
 */
export const ProducerEvents = {
  /** SendEvent: a send attempt was answered or failed. */
  SEND: 'send',
  /** RequestTimeoutEvent: a request of the client instance got no answer in time. */
  REQUEST_TIMEOUT: 'requestTimeout',
  /** ConnectionEvent: a connection of the client instance opened. */
  CONNECT: 'connect',
  /** ConnectionEvent: a connection of the client instance closed. */
  DISCONNECT: 'disconnect',
} as const;

/**
 * One send attempt (a retry on another queue is another event), as the metric rocketmq_send_cost_time counts them.
 * @category Producing
 */
export interface SendEvent {
  /** The message's topic. */
  topic: string;
  /** The queue the attempt went to. */
  queue: MessageQueue;
  /** The broker's status, or FAILED when the attempt threw (`error`). */
  status: SendStatus | 'FAILED';
  /** From the attempt's start to its answer or failure, in milliseconds (producer's clock). */
  latencyMs: number;
  /** Messages the attempt carried (a batch's size, else 1). */
  messages: number;
  /** Status FAILED: why the attempt failed. */
  error?: Error | undefined;
}

/**
 * The events of a Producer, by name (see ProducerEvents).
 * @category Producing
 */
export interface ProducerEventMap {
  /** A send attempt was answered or failed. */
  send: [event: SendEvent];
  /** A request of the client instance got no answer in time. */
  requestTimeout: [event: RequestTimeoutEvent];
  /** A connection of the client instance opened. */
  connect: [event: ConnectionEvent];
  /** A connection of the client instance closed. */
  disconnect: [event: ConnectionEvent];
  /** A name server did not answer (every failure; the next one is tried, routes are polled again). */
  nameServerError: [info: { addr: string; error: Error }];
  /** A name server answers again after `nameServerError`s. */
  nameServerReachable: [info: { addr: string }];
}

/** The producer's emitter, metrics and the calls its send path makes. Internal. */
export class ProducerInstrumentation {
  // A listener added for connect, disconnect or requestTimeout starts observing the remoting client.
  private readonly emitter = new TypedEmitter<ProducerEventMap>({ onListen: () => this.relay.listening() });
  metrics: ProducerMetrics | null = null;

  on<E extends keyof ProducerEventMap>(event: E, listener: (...args: ProducerEventMap[E]) => void): () => void {
    return this.emitter.on(event, listener);
  }

  private readonly relay = new RemotingEventRelay(
    (event) => this.has(event),
    // The emitter's map has these three entries with the same payloads (RemotingClientEvents).
    (event, ...args) =>
      (this.emit as (e: keyof RemotingClientEvents, ...a: unknown[]) => void).call(this, event, ...args),
  );

  /** At start: observe the client instance's connections and timeouts while someone listens to them. */
  attach(remoting: RemotingClient): void {
    this.relay.attach(remoting);
  }

  detach(): void {
    this.relay.detach();
  }

  has(event: keyof ProducerEventMap): boolean {
    return this.emitter.listening(event);
  }

  /** Emits; a listener that throws is logged and never turns a send into a failure. */
  emit<E extends keyof ProducerEventMap>(event: E, ...args: ProducerEventMap[E]): void {
    try {
      this.emitter.emit(event, ...args);
    } catch (err) {
      log('a %s listener threw: %s', event, (err as Error)?.message ?? err);
    }
  }

  /** At start: the metrics, or none when they are off. */
  async start(options: MetricsOptions | undefined, clientId: string): Promise<void> {
    const meter = await resolveMeter(options);
    this.metrics = meter ? new ProducerMetrics(meter, clientId) : null;
  }

  /** Whether a send attempt must be timed (the clock is read only then). */
  get observed(): boolean {
    return this.metrics !== null || this.emitter.listening('send');
  }

  /** A send attempt of `messages` messages ended: `result` is the status, or the error it threw. */
  sendDone(topic: string, queue: MessageQueue, messages: number, latencyMs: number, result: SendStatus | Error): void {
    const failed = result instanceof Error;
    // Java's interceptor: success for every answered attempt (FLUSH_DISK_TIMEOUT & co. stored the message), failure for a throw.
    this.metrics?.sendDone(topic, messages, latencyMs, !failed);
    if (this.emitter.listening('send')) {
      this.emit('send', {
        topic,
        queue,
        status: failed ? 'FAILED' : result,
        latencyMs,
        messages,
        error: failed ? result : undefined,
      });
    }
  }
}

/** Messages a prepared send carries: a batch's uniqMsgId joins its members' ids with ','. */
export function messagesIn(batch: boolean, uniqMsgId: string): number {
  if (!batch) return 1;
  let n = 1;
  for (let i = uniqMsgId.indexOf(','); i >= 0; i = uniqMsgId.indexOf(',', i + 1)) n++;
  return n;
}
