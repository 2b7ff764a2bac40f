import type { UniqKeyGenerator } from '../../protocol/index.js';
import type { MQClientInstance } from '../client/index.js';
import type { Clock } from '../clock.js';
import { AsyncBackpressure } from './async-backpressure.js';
import type { Message } from './message.js';
import { MQFaultStrategy } from './mq-fault-strategy.js';
import { ProduceAccumulator, type AccumulatorHost } from './produce-accumulator.js';

/** What the send path needs from its producer. */
export interface SendPathHost extends AccumulatorHost {
  /** Throws ProducerStateError once the producer is shut down: a send that waited for a permit checks it. */
  ensureRunning(): void;
}
import type { ResolvedProducerOptions } from './producer-options.js';
import type { SendOptions } from './send-options.js';
import type { SendResult } from './send-result.js';

/** Body bytes of a message as back-pressure counts them (Java: the body's length, 1 when there is none). */
export function bodyBytes(msg: Message): number {
  const b = msg.body as unknown;
  if (typeof b === 'string') return Buffer.byteLength(b, 'utf8');
  if (b instanceof Uint8Array) return b.byteLength;
  return 1;
}

/**
 * The send-path options of a Producer in one place (send-path-options.ts): the fault strategy that
 * picks queues, back-pressure around each send, and the accumulator that batches eligible sends.
 */
export class SendPath {
  readonly faults: MQFaultStrategy;
  readonly backpressure: AsyncBackpressure | null;
  readonly accumulator: ProduceAccumulator | null;

  constructor(
    private readonly options: ResolvedProducerOptions,
    clock: Clock,
    uniqKeys: UniqKeyGenerator,
    private readonly host: SendPathHost,
  ) {
    this.faults = new MQFaultStrategy(options, clock);
    this.backpressure = options.enableBackpressureForAsyncMode ? new AsyncBackpressure(options, clock) : null;
    this.accumulator = options.autoBatch ? new ProduceAccumulator(options, clock, uniqKeys, host) : null;
  }

  /**
   * Starts the fault detector (when on): it probes a faulty broker's master with GET_MAX_OFFSET of
   * queue 0 of a topic this producer sends to, as Java's ServiceDetector does.
   */
  start(instance: MQClientInstance, anyTopic: () => string | undefined): void {
    this.faults.start({
      resolve: (name) => instance.findBrokerMasterAddress(name),
      detect: async (brokerName, addr, timeoutMs) => {
        const topic = anyTopic();
        if (topic === undefined) return false;
        try {
          await instance.getMaxOffset(addr, { topic, brokerName, queueId: 0 }, timeoutMs);
          return true;
        } catch {
          return false;
        }
      },
    });
  }

  /** Sends the batches still gathering, waits for those in flight, stops the detector. */
  async shutdown(): Promise<void> {
    await this.accumulator?.flushAll();
    await this.faults.shutdown();
  }

  /**
   * One `send()`: under back-pressure when on, then into a batch when autoBatch takes it, else
   * `direct` with the budget left after waiting for a permit.
   */
  send(msg: Message, opts: SendOptions, direct: (opts: SendOptions) => Promise<SendResult>): Promise<SendResult> {
    const acc = this.accumulator;
    const run = (o: SendOptions) => (acc?.eligible(msg, opts) ? acc.add(msg, opts) : direct(o));
    return this.gate(msg.topic, bodyBytes(msg), opts, run);
  }

  /** Runs a send under back-pressure when on; `run` gets the options with the budget left. */
  gate<T>(topic: string, bytes: number, opts: SendOptions, run: (opts: SendOptions) => Promise<T>): Promise<T> {
    const bp = this.backpressure;
    if (!bp) return run(opts);
    const budget = opts.timeoutMs ?? this.options.sendMsgTimeoutMs;
    return bp.run(topic, bytes, budget, (leftMs) => {
      // a send that waited may find the producer shut down meanwhile
      this.host.ensureRunning();
      return run(leftMs === budget ? opts : { ...opts, timeoutMs: leftMs });
    });
  }
}
