import { createRequire } from 'node:module';
import createDebug from '../debug.js';
import type { MessageExt, MessageQueue } from '../../protocol/index.js';
import type { MQClientInstance } from '../client/index.js';
import { systemClock, type Clock, type ClockTimer } from '../clock.js';
import { MessageValidationError, ProducerStateError, RequestTimeoutError } from './errors.js';
import { validateTopic, type Message } from './message.js';
import { producerOptionCheck, type ResolvedProducerOptions } from './producer-options.js';
import type { SendOptions } from './send-options.js';
import type { SendResult } from './send-result.js';

const log = createDebug('rocketwire:producer');

/**
 * Request–reply (Java's DefaultMQProducer#request, MessageUtil#createReplyMessage, RequestFutureHolder).
 *
 * The requester sends a normal message carrying CORRELATION_ID (a UUID), REPLY_TO_CLIENT (its client
 * id) and TTL (the timeout in ms), and waits. The replier consumes it and sends a reply to
 * `<CLUSTER>_REPLY_TOPIC` (CLUSTER is stamped on every stored message by the broker) with
 * MSG_TYPE=reply and the three properties copied, by SEND_REPLY_MESSAGE_V2 (325). The broker that
 * takes the reply finds the requester's connection by REPLY_TO_CLIENT among the producers that
 * heartbeated it and pushes PUSH_REPLY_MESSAGE_TO_CLIENT (326); the requester's client instance
 * hands it to the pending table below by CORRELATION_ID.
 */

/** The value of MSG_TYPE on a reply (MixAll.REPLY_MESSAGE_FLAG). */
export const REPLY_MESSAGE_FLAG = 'reply';

/** The topic replies of a cluster go to (MixAll.getReplyTopic). */
export function replyTopicOf(clusterName: string): string {
  return `${clusterName}_REPLY_TOPIC`;
}

/** A correlation id as Java's CorrelationIdUtil makes one: a random UUID, lower-case with dashes. */
export function createCorrelationId(): string {
  return (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).randomUUID();
}

/**
 * Properties the producer itself puts on a message (reserved names a user property may not take),
 * carried beside the message under this symbol so that `producer.send(createReplyMessage(…))`
 * works as Java's `producer.send(MessageUtil.createReplyMessage(…))` does.
 */
export const SYSTEM_PROPERTIES: unique symbol = Symbol('rocketwire.systemProperties');

/** A message with properties only the producer may set (a request or a reply). */
export type MessageWithSystemProperties = Message & { [SYSTEM_PROPERTIES]?: Readonly<Record<string, string>> };

/** The system properties of `msg`, if it carries any. */
export function systemPropertiesOf(msg: Message): Readonly<Record<string, string>> | undefined {
  return (msg as MessageWithSystemProperties)[SYSTEM_PROPERTIES];
}

/** True for a message to be sent with SEND_REPLY_MESSAGE(_V2): MSG_TYPE is "reply", as MQClientAPIImpl#sendMessage checks. */
export function isReplyMessage(msg: Message): boolean {
  return systemPropertiesOf(msg)?.MSG_TYPE === REPLY_MESSAGE_FLAG;
}

/**
 * What a reply is built from: a request message as a consumer received it.
 * @category Producing
 */
export interface RequestMessageLike {
  /**
   * The received request's properties (its CORRELATION_ID, REPLY_TO_CLIENT and cluster name say where the
   * reply goes).
   */
  properties: Readonly<Record<string, string>>;
}

/**
 * The reply to `request` (MessageUtil#createReplyMessage): topic `<CLUSTER>_REPLY_TOPIC`, MSG_TYPE
 * "reply", and the request's CORRELATION_ID, REPLY_TO_CLIENT and TTL. Send it with
 * `producer.send(reply)` (or `producer.sendReply(request, body)`). A message with no CLUSTER
 * property (one the broker did not store, or not a request) throws MessageValidationError naming
 * CLUSTER, as Java throws CREATE_REPLY_MESSAGE_EXCEPTION; one with no REPLY_TO_CLIENT or
 * CORRELATION_ID names that (Java builds a reply the broker then refuses).
 * @category Producing
 */
export function createReplyMessage(
  request: RequestMessageLike,
  body: Message['body'],
  extra: Omit<Message, 'topic' | 'body'> = {},
): Message {
  if (request === null || request === undefined || typeof request !== 'object') {
    throw new MessageValidationError(
      'request',
      'createReplyMessage needs the request message it answers, got ' + String(request),
    );
  }
  const p = request.properties ?? {};
  const cluster = p.CLUSTER;
  if (cluster === undefined || cluster === '') {
    throw new MessageValidationError(
      'CLUSTER',
      'cannot reply to this message: it has no CLUSTER property (the broker did not store it, or it is not a request)',
    );
  }
  for (const name of ['REPLY_TO_CLIENT', 'CORRELATION_ID'] as const) {
    if (p[name] === undefined || p[name] === '') {
      throw new MessageValidationError(
        name,
        `cannot reply to this message: it has no ${name} property (it was not sent by request())`,
      );
    }
  }
  const system: Record<string, string> = {
    MSG_TYPE: REPLY_MESSAGE_FLAG,
    CORRELATION_ID: p.CORRELATION_ID!,
    REPLY_TO_CLIENT: p.REPLY_TO_CLIENT!,
  };
  if (p.TTL !== undefined) system.TTL = p.TTL;
  const reply: MessageWithSystemProperties = {
    ...extra,
    topic: replyTopicOf(cluster),
    body,
    [SYSTEM_PROPERTIES]: system,
  };
  return reply;
}

/** The message of a request: `msg` with CORRELATION_ID, REPLY_TO_CLIENT and TTL (prepareSendRequest). */
export function requestMessage(msg: Message, correlationId: string, clientId: string, timeoutMs: number): Message {
  const own = systemPropertiesOf(msg);
  const system = { ...own, CORRELATION_ID: correlationId, REPLY_TO_CLIENT: clientId, TTL: String(timeoutMs) };
  const out: MessageWithSystemProperties = { ...msg, [SYSTEM_PROPERTIES]: system };
  return out;
}

/** Largest request timeout: the clock's timers take a signed 32-bit delay. */
export const MAX_REQUEST_TIMEOUT_MS = 2 ** 31 - 1;

/** The timeout of one request, checked: a positive integer of milliseconds (ProducerOptionError naming timeoutMs). */
export function checkRequestTimeout(timeoutMs: unknown): number {
  return producerOptionCheck.intIn('timeoutMs', timeoutMs, 1, MAX_REQUEST_TIMEOUT_MS);
}

interface PendingRequest {
  correlationId: string;
  topic: string;
  timeoutMs: number;
  deadline: number;
  sendOk: boolean;
  resolve: (reply: MessageExt) => void;
  reject: (err: Error) => void;
}

/**
 * The requests of one producer waiting for their replies, by CORRELATION_ID (Java's
 * RequestFutureHolder table, which is per JVM; here per producer, each registered with its client
 * instance). One timer, armed for the earliest deadline, expires requests on the injected clock
 * (Java's scan every 1 s, whose sync waits end at the timeout itself).
 */
export class RequestFutureTable {
  private readonly pending = new Map<string, PendingRequest>();
  private timer: ClockTimer | null = null;
  private armedFor = Infinity;

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.pending.size;
  }

  /** Waits for the reply of `correlationId`; rejects with RequestTimeoutError `timeoutMs` after `begin`. */
  add(correlationId: string, topic: string, timeoutMs: number, begin = this.clock.now()): Promise<MessageExt> {
    return new Promise<MessageExt>((resolve, reject) => {
      const deadline = begin + timeoutMs;
      this.pending.set(correlationId, { correlationId, topic, timeoutMs, deadline, sendOk: false, resolve, reject });
      this.arm(deadline);
    });
  }

  /** The broker confirmed the request message (kept for the timeout's message). */
  sendConfirmed(correlationId: string): void {
    const p = this.pending.get(correlationId);
    if (p) p.sendOk = true;
  }

  /** Completes the request the reply answers; false when none waits for it (late, or not ours). */
  complete(reply: MessageExt): boolean {
    const id = reply.properties.CORRELATION_ID;
    const p = id === undefined ? undefined : this.pending.get(id);
    if (!p) return false;
    this.pending.delete(p.correlationId);
    p.resolve(reply);
    this.rearm();
    return true;
  }

  /** Fails the request (its send failed); no-op when it already ended. */
  fail(correlationId: string, err: Error): void {
    const p = this.pending.get(correlationId);
    if (!p) return;
    this.pending.delete(correlationId);
    p.reject(err);
    this.rearm();
  }

  /** Fails every waiting request with `err` (the producer shuts down). */
  failAll(err: (p: { correlationId: string; topic: string }) => Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    this.disarm();
    for (const p of all) p.reject(err(p));
  }

  private arm(deadline: number): void {
    if (deadline >= this.armedFor) return;
    this.disarm();
    this.armedFor = deadline;
    this.timer = this.clock.setTimeout(() => this.expire(), Math.max(0, deadline - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
  }

  private rearm(): void {
    if (this.pending.size === 0) {
      this.disarm();
      return;
    }
    let next = Infinity;
    for (const p of this.pending.values()) if (p.deadline < next) next = p.deadline;
    if (next !== this.armedFor) {
      this.disarm();
      this.arm(next);
    }
  }

  private expire(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.clock.now();
    const expired: PendingRequest[] = [];
    for (const p of this.pending.values()) if (p.deadline <= now) expired.push(p);
    for (const p of expired) {
      this.pending.delete(p.correlationId);
      log('request %s to %s: no reply within %d ms', p.correlationId, p.topic, p.timeoutMs);
      p.reject(new RequestTimeoutError(p.topic, p.correlationId, p.timeoutMs, p.sendOk));
    }
    this.rearm();
  }
}

/** What request–reply uses of its producer (the public surface of Producer). */
export interface RequestReplyHost {
  readonly options: ResolvedProducerOptions;
  send(msg: Message, opts?: SendOptions): Promise<SendResult>;
  fetchPublishMessageQueues(topic: string): Promise<MessageQueue[]>;
}

/** The producer's side of request–reply: requests, their pending table, and sending replies. */
export class RequestReply {
  private table: RequestFutureTable | null = null;
  private instance: MQClientInstance | null = null;
  private removeListener: (() => void) | null = null;
  /** Topics whose brokers had a heartbeat from this client before its first request (prepareSendRequest). */
  private readonly prepared = new Set<string>();

  constructor(private readonly producer: RequestReplyHost) {}

  /** The producer started on `instance`: take the replies it is pushed. */
  attach(instance: MQClientInstance): void {
    this.instance = instance;
    this.table = new RequestFutureTable(this.producer.options.client.clock ?? systemClock);
    const table = this.table;
    this.removeListener = instance.onReplyMessage((reply) => table.complete(reply));
  }

  /**
   * The producer shuts down: waiting requests fail at once with ProducerStateError
   * (in Java they wait out their timeout, though no reply can reach a client that unregistered).
   */
  detach(): void {
    this.removeListener?.();
    this.removeListener = null;
    this.table?.failAll(
      (p) =>
        new ProducerStateError(
          'SHUTDOWN',
          `producer shut down while request ${p.correlationId} to topic ${p.topic} waited for its reply`,
        ),
    );
  }

  async request(msg: Message, timeoutMs: number, opts: Omit<SendOptions, 'timeoutMs'> = {}): Promise<MessageExt> {
    const timeout = checkRequestTimeout(timeoutMs);
    const instance = this.instance!;
    const table = this.table!;
    const clock = this.producer.options.client.clock ?? systemClock;
    const begin = clock.now();
    const topic = validateTopic(msg.topic, this.producer.options.createTopicKey);
    const correlationId = createCorrelationId();
    const req = requestMessage(msg, correlationId, instance.clientId, timeout);
    // prepareSendRequest: a topic this client has no route for yet gets one, then every broker
    // of the routes a heartbeat, so that the broker taking the reply knows this client's connection.
    // Java does so only when it has no route yet, so a requester that sent or fetched the route
    // before its first heartbeat reached the brokers had its replies refused ("channel of <id> not
    // found") until the next 30 s heartbeat: here the first request of each topic always heartbeats.
    if (!this.prepared.has(topic)) {
      if (!instance.cachedTopicRoute(topic)) await this.producer.fetchPublishMessageQueues(topic);
      await instance.sendHeartbeatToAllBrokers();
      this.prepared.add(topic);
    }
    const reply = table.add(correlationId, topic, timeout, begin);
    // the timeout may reject it while the send is still awaited: the caller sees it when we return it
    reply.catch(() => undefined);
    const elapsed = clock.now() - begin;
    try {
      await this.producer.send(req, { ...opts, timeoutMs: Math.max(1, timeout - elapsed) });
      table.sendConfirmed(correlationId);
    } catch (err) {
      table.fail(correlationId, err as Error);
    }
    return reply;
  }

  sendReply(request: RequestMessageLike, body: Message['body'], opts: SendOptions): Promise<SendResult> {
    return this.producer.send(createReplyMessage(request, body), opts);
  }
}
