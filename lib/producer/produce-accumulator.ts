import {
  encodeBatch,
  encodeProperties,
  isRetryTopic,
  MAX_PROPERTIES_BYTES,
  Operations,
  type MessageQueue,
  type UniqKeyGenerator,
} from '../../protocol/index.js';
import type { Clock, ClockTimer } from '../clock.js';
import { MessageValidationError } from './errors.js';
import { validateTopic, type Message } from './message.js';
import { encodeMessageProperties, messageBody } from './message-encoding.js';
import type { ResolvedProducerOptions } from './producer-options.js';
import { isReplyMessage } from './request-reply.js';
import type { Prepared } from './send-preparation.js';
import type { SendOptions } from './send-options.js';
import type { SendResult } from './send-result.js';
import { isDelayed } from './timer-message.js';

/** What the accumulator needs from the producer: a prepared batch sent with the producer's retries. */
export interface AccumulatorHost {
  sendPrepared(p: Prepared, opts: SendOptions): Promise<SendResult>;
}

/** A record of a batch body: 4 total + 4 magic + 4 body CRC + 4 flag + 4 body length + 2 properties length. */
const RECORD_OVERHEAD = 22;

interface Member {
  uniqKey: string;
  record: { body: Buffer; flag: number; properties: string };
  resolve: (r: SendResult) => void;
  reject: (e: unknown) => void;
}

/** The messages gathered under one key (Java's MessageAccumulation). */
interface Accumulation {
  key: string;
  topic: string;
  wait: boolean;
  queue: MessageQueue | undefined;
  members: Member[];
  /** Body bytes, which batchMaxBytes and totalBatchMaxBytes count, as Java's messagesSize. */
  bodyBytes: number;
  /** The encoded batch body so far, kept under maxMessageSize. */
  encodedBytes: number;
  timer: ClockTimer | null;
}

type Options = Pick<
  ResolvedProducerOptions,
  'batchMaxDelayMs' | 'batchMaxBytes' | 'totalBatchMaxBytes' | 'maxMessageSize' | 'createTopicKey'
>;

/**
 * Automatic batching (Java's ProduceAccumulator): `send()`s with the same topic, chosen queue (if
 * any), tags and waitStoreMsgOK are gathered and sent as one SEND_BATCH_MESSAGE when their bodies
 * pass `batchMaxBytes` or `batchMaxDelayMs` after the first one, on the injected clock. The batch
 * goes through the producer's normal send (queue selection, retries, fault strategy); each caller
 * gets its own SendResult: its own msgId and offsetMsgId, the batch's queue and the batch's first
 * queue offset plus its place in the batch, as Java's splitSendResults gives them.
 */
export class ProduceAccumulator {
  private readonly open = new Map<string, Accumulation>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Body bytes gathered or in flight in batches (Java's currentlyHoldSize). */
  private held = 0;

  constructor(
    private readonly options: Options,
    private readonly clock: Clock,
    private readonly uniqKeys: UniqKeyGenerator,
    private readonly host: AccumulatorHost,
  ) {}

  /** Body bytes held in batches now. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Whether a send may join a batch, as Java's canBatch (and the send overloads that use the
   * accumulator): not delayed or timed, not to a retry topic, not a reply; no queue selector and no
   * per-send timeout; and the bytes held in batches are below totalBatchMaxBytes.
   */
  eligible(msg: Message, opts: SendOptions): boolean {
    return (
      this.held < this.options.totalBatchMaxBytes &&
      opts.timeoutMs === undefined &&
      opts.selector === undefined &&
      !isDelayed(msg) &&
      !isRetryTopic(msg.topic) &&
      !isReplyMessage(msg)
    );
  }

  /**
   * Adds a message to its batch; resolves with this message's own SendResult once the batch is
   * stored. A message that fails the checks rejects alone, before it joins a batch.
   */
  add(msg: Message, opts: SendOptions): Promise<SendResult> {
    try {
      return this.join(msg, opts);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private join(msg: Message, opts: SendOptions): Promise<SendResult> {
    const topic = validateTopic(msg.topic, this.options.createTopicKey);
    const body = messageBody(msg, this.options.maxMessageSize);
    const uniqKey = this.uniqKeys.next();
    const properties = encodeMessageProperties(msg, uniqKey);
    const propBytes = Buffer.byteLength(properties, 'utf8');
    if (propBytes > MAX_PROPERTIES_BYTES)
      throw new MessageValidationError(
        'properties',
        `properties take ${propBytes} bytes, more than ${MAX_PROPERTIES_BYTES}`,
      );
    const wait = msg.waitStoreMsgOK ?? true;
    const q = opts.queue;
    const key = `${topic}\u0000${q ? `${q.brokerName}\u0000${q.queueId}` : ''}\u0000${wait}\u0000${msg.tags ?? ''}`;
    const encoded = RECORD_OVERHEAD + body.length + propBytes;
    let acc = this.open.get(key);
    // A batch is one message to the broker: it never grows past maxMessageSize.
    if (acc && acc.encodedBytes + encoded > this.options.maxMessageSize) {
      this.flush(acc);
      acc = undefined;
    }
    if (!acc) {
      acc = { key, topic, wait, queue: q, members: [], bodyBytes: 0, encodedBytes: 0, timer: null };
      this.open.set(key, acc);
      const a = acc;
      acc.timer = this.clock.setTimeout(() => {
        a.timer = null;
        this.flush(a);
      }, this.options.batchMaxDelayMs);
    }
    const result = new Promise<SendResult>((resolve, reject) => {
      acc.members.push({ uniqKey, record: { body, flag: msg.flag ?? 0, properties }, resolve, reject });
    });
    acc.bodyBytes += body.length;
    acc.encodedBytes += encoded;
    this.held += body.length;
    if (acc.bodyBytes > this.options.batchMaxBytes) this.flush(acc);
    return result;
  }

  /** Sends every gathered batch now and waits until all batches in flight have settled (shutdown). */
  async flushAll(): Promise<void> {
    for (const acc of [...this.open.values()]) this.flush(acc);
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private flush(acc: Accumulation): void {
    if (this.open.get(acc.key) !== acc) return;
    this.open.delete(acc.key);
    if (acc.timer) this.clock.clearTimeout(acc.timer);
    acc.timer = null;
    const done = this.sendBatch(acc).finally(() => {
      this.held -= acc.bodyBytes;
      this.inFlight.delete(done);
    });
    this.inFlight.add(done);
  }

  private async sendBatch(acc: Accumulation): Promise<void> {
    const { members } = acc;
    let r: SendResult;
    try {
      r = await this.host.sendPrepared(this.prepared(acc), acc.queue ? { queue: acc.queue } : {});
    } catch (err) {
      for (const m of members) m.reject(err);
      return;
    }
    // The broker answers the batch's first queue offset and its members' offset ids joined by commas.
    const offsetIds = r.offsetMsgId.split(',');
    for (const [i, m] of members.entries())
      m.resolve({ ...r, msgId: m.uniqKey, offsetMsgId: offsetIds[i] ?? r.offsetMsgId, queueOffset: r.queueOffset + i });
  }

  private prepared(acc: Accumulation): Prepared {
    const first = acc.members[0]!;
    return {
      topic: acc.topic,
      op: Operations.SEND_BATCH_MESSAGE,
      body: encodeBatch(acc.members.map((m) => m.record)),
      sysFlag: 0,
      flag: 0,
      // The batch itself carries WAIT only, as prepareBatch's: members keep their own tags and keys.
      properties: encodeProperties({ WAIT: String(acc.wait) }),
      batch: true,
      uniqMsgId: acc.members.map((m) => m.uniqKey).join(','),
      msg: { topic: acc.topic, body: first.record.body },
    };
  }
}
