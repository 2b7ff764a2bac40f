import {
  decodeMessages,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
  Operations,
  storedMessageSize,
  ResponseCode,
  type MessageExt,
  type MessageQueue,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type PullMessageRequestHeader,
  type RemotingCommand,
} from '../../protocol/index.js';
import type { RemotingClient } from '../remoting/index.js';
import { PullOffsetError } from './errors.js';
import {
  call,
  invokeOperation,
  operationRequest,
  type CallOptions,
  type CallReply,
  type Reply,
  type RequestStamp,
} from './operation-call.js';

/**
 * Fields of PULL_MESSAGE's PullMessageRequestHeader (docs/protocol-facts.md#pull): protocol's header type. Its
 * `suspendTimeoutMillis` keeps the Java wire key.
 */
export type PullMessageRequest = PullMessageRequestHeader;

/**
 * A broker's answer to a pull: messages FOUND, NO_NEW_MSG past the queue's end, NO_MATCHED_MSG
 * (all filtered out), or OFFSET_ILLEGAL (the offset is outside the queue).
 * @category Consuming
 */
export type PullStatus = 'FOUND' | 'NO_NEW_MSG' | 'NO_MATCHED_MSG' | 'OFFSET_ILLEGAL';

/** A pull answer. `messages` decodes `bodyBytes` on first access (decompressing bodies). */
export interface PullResult {
  status: PullStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  suggestWhichBrokerId: number;
  /** The raw concatenated stored records (FOUND only), a view into the received frame. */
  bodyBytes: Buffer | null;
  /**
   * Static topics: what turns the records' physical queue offsets into the logic queue's (the answer's
   * `offsetDelta`); `messages` has it added already, a decoder of `bodyBytes` must add it. 0 otherwise.
   */
  offsetDelta: number;
  readonly messages: MessageExt[];
}

/**
 * A PullResult whose messages are decoded on first access and kept in a field of this (young) object.
 * Not an object literal whose `messages` getter closes over a variable of the async
 * pullMessage call: measured with --trace-gc-nvp, with such a closure nearly every decoded message
 * survived two scavenges and was promoted (150 MB promoted per 300 000 messages, a mark-compact
 * every ~70 ms) and the consumer spent about a quarter of its CPU in the garbage collector; with
 * this class almost nothing is promoted (docs/bench-log/consume.md). Keep decoded messages out of
 * closures and objects that outlive the pull.
 */
class DecodedPullResult implements PullResult {
  private decoded: MessageExt[] | null = null;
  constructor(
    readonly status: PullStatus,
    readonly nextBeginOffset: number,
    readonly minOffset: number,
    readonly maxOffset: number,
    readonly suggestWhichBrokerId: number,
    readonly bodyBytes: Buffer | null,
    readonly offsetDelta: number,
  ) {}

  get messages(): MessageExt[] {
    if (this.decoded === null)
      this.decoded = this.bodyBytes ? decodeMessages(this.bodyBytes, { queueOffsetDelta: this.offsetDelta }) : [];
    return this.decoded;
  }
}

/** Per-call context: the instance's timeouts and request stamping. */
export interface ClientApiContext extends RequestStamp {
  readonly remoting: RemotingClient;
  readonly clientId: string;
  readonly apiTimeoutMs: number;
}

const PULL_STATUS: Record<number, PullStatus> = {
  [ResponseCode.SUCCESS]: 'FOUND',
  [ResponseCode.PULL_NOT_FOUND]: 'NO_NEW_MSG',
  [ResponseCode.PULL_RETRY_IMMEDIATELY]: 'NO_MATCHED_MSG',
  [ResponseCode.PULL_OFFSET_MOVED]: 'OFFSET_ILLEGAL',
};

/**
 * The client's RPCs to brokers (MQClientAPIImpl in Java), each a typed call over a row of
 * protocol's operation table. Every method names the broker address it talks to; non-success
 * answers become BrokerError, a missing or garbled response field a ResponseFieldError.
 */
export class MQClientAPI {
  protected readonly ctx: ClientApiContext;

  constructor(ctx: ClientApiContext) {
    this.ctx = ctx;
  }

  /** Send `op` to `addr` and decode its SUCCESS answer with the row's codecs. */
  invoke<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
    opts?: CallOptions,
  ): Promise<Reply<O>> {
    return invokeOperation(this.ctx.remoting, this.ctx, addr, op, header, body, {
      timeoutMs: opts?.timeoutMs ?? this.ctx.apiTimeoutMs,
      signal: opts?.signal,
    });
  }

  /**
   * The call path (operation-call.ts's `call`) with this client's stamp: SUCCESS or one of the
   * row's answer codes, for the caller to switch on `reply.code`; any other code a BrokerError.
   */
  call<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
    opts?: CallOptions,
  ): Promise<CallReply<O>> {
    return call(this.ctx.remoting, this.ctx, addr, op, header, body, {
      timeoutMs: opts?.timeoutMs ?? this.ctx.apiTimeoutMs,
      signal: opts?.signal,
    });
  }

  /** Send `op` oneway: resolves once the frame is handed to the socket. */
  invokeOneway<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
    opts?: { remark?: string | null },
  ): Promise<void> {
    return call(this.ctx.remoting, this.ctx, addr, op, header, body, { oneway: true, remark: opts?.remark });
  }

  /** The request of `op` (row codecs), stamped with this client's language, version and serialize type. */
  createOperationRequest<O extends Operation>(
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
    oneway = false,
  ): RemotingCommand {
    return operationRequest(op, header, body, this.ctx, oneway);
  }

  /** GET_CONSUMER_LIST_BY_GROUP: client ids of the group's live consumers. */
  async getConsumerIdList(brokerAddr: string, consumerGroup: string, timeoutMs?: number): Promise<string[]> {
    const r = await this.invoke(brokerAddr, Operations.GET_CONSUMER_LIST_BY_GROUP, { consumerGroup }, undefined, {
      timeoutMs,
    });
    return r.body?.consumerIdList ?? [];
  }

  /** QUERY_CONSUMER_OFFSET: the stored offset, or −1 when the broker answers QUERY_NOT_FOUND. */
  async queryConsumerOffset(
    brokerAddr: string,
    group: string,
    mq: MessageQueue,
    timeoutMs = this.ctx.apiTimeoutMs,
  ): Promise<number> {
    const op = Operations.QUERY_CONSUMER_OFFSET;
    const header = { consumerGroup: group, topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName };
    const reply = await this.call(brokerAddr, op, header, undefined, { timeoutMs });
    // Decided by the code, header unread, as Java's MQClientAPIImpl.queryConsumerOffset does (it
    // throws OffsetNotFoundException for QUERY_NOT_FOUND whatever the answer carries).
    if (reply.code === ResponseCode.QUERY_NOT_FOUND) return -1;
    return reply.header.offset;
  }

  /** UPDATE_CONSUMER_OFFSET, oneway as the push consumer sends it. */
  async updateConsumerOffsetOneway(
    brokerAddr: string,
    group: string,
    mq: MessageQueue,
    commitOffset: number,
  ): Promise<void> {
    await this.invokeOneway(brokerAddr, Operations.UPDATE_CONSUMER_OFFSET, updateOffsetHeader(group, mq, commitOffset));
  }

  /** UPDATE_CONSUMER_OFFSET as a normal request (the shutdown flush waits for it). */
  async updateConsumerOffset(
    brokerAddr: string,
    group: string,
    mq: MessageQueue,
    commitOffset: number,
    timeoutMs?: number,
  ): Promise<void> {
    await this.invoke(
      brokerAddr,
      Operations.UPDATE_CONSUMER_OFFSET,
      updateOffsetHeader(group, mq, commitOffset),
      undefined,
      { timeoutMs },
    );
  }

  /** GET_MAX_OFFSET: one past the last message (0 for an empty queue). */
  async getMaxOffset(brokerAddr: string, mq: MessageQueue, timeoutMs?: number): Promise<number> {
    const header = { topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName };
    return (await this.invoke(brokerAddr, Operations.GET_MAX_OFFSET, header, undefined, { timeoutMs })).header.offset;
  }

  /** GET_MIN_OFFSET: the smallest offset still stored. */
  async getMinOffset(brokerAddr: string, mq: MessageQueue, timeoutMs?: number): Promise<number> {
    const header = { topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName };
    return (await this.invoke(brokerAddr, Operations.GET_MIN_OFFSET, header, undefined, { timeoutMs })).header.offset;
  }

  /** SEARCH_OFFSET_BY_TIMESTAMP (semantics differ between 4.9 and 5.x, docs/protocol-facts.md#offset-look-ups). */
  async searchOffsetByTimestamp(
    brokerAddr: string,
    mq: MessageQueue,
    timestamp: number,
    timeoutMs?: number,
  ): Promise<number> {
    const header = { topic: mq.topic, queueId: mq.queueId, timestamp, bname: mq.brokerName };
    return (await this.invoke(brokerAddr, Operations.SEARCH_OFFSET_BY_TIMESTAMP, header, undefined, { timeoutMs }))
      .header.offset;
  }

  /** CONSUMER_SEND_MSG_BACK (docs/protocol-facts.md#send-back): `offset` is the message's commit-log offset. */
  async consumerSendMessageBack(
    brokerAddr: string,
    args: {
      group: string;
      commitLogOffset: number;
      delayLevel: number;
      originMsgId?: string;
      originTopic?: string;
      maxReconsumeTimes?: number;
      brokerName?: string;
    },
    timeoutMs = 5000,
  ): Promise<void> {
    const header = {
      offset: args.commitLogOffset,
      group: args.group,
      delayLevel: args.delayLevel,
      originMsgId: args.originMsgId,
      originTopic: args.originTopic,
      unitMode: false,
      maxReconsumeTimes: args.maxReconsumeTimes,
      bname: args.brokerName,
    };
    await this.invoke(brokerAddr, Operations.CONSUMER_SEND_MSG_BACK, header, undefined, { timeoutMs });
  }

  /**
   * PULL_MESSAGE (or LITE_PULL_MESSAGE, same header and answer: `op`). `timeoutMs` must exceed suspendTimeoutMillis plus the broker's check period.
   * Its answers (PULL_NOT_FOUND…) carry the same header as SUCCESS, decoded as strictly.
   */
  async pullMessage(
    brokerAddr: string,
    header: PullMessageRequest,
    timeoutMs: number,
    signal?: AbortSignal,
    op: typeof Operations.PULL_MESSAGE | typeof Operations.LITE_PULL_MESSAGE = Operations.PULL_MESSAGE,
  ): Promise<PullResult> {
    const reply = await this.call(brokerAddr, op, header, undefined, { timeoutMs, signal });
    const status = PULL_STATUS[reply.code]!;
    const h = reply.header;
    const found = status === 'FOUND' ? reply.body : null;
    checkPullOffsets(brokerAddr, header, status, h, reply.remark, found);
    return new DecodedPullResult(
      status,
      h.nextBeginOffset,
      h.minOffset,
      h.maxOffset,
      h.suggestWhichBrokerId,
      found,
      h.offsetDelta ?? 0,
    );
  }

  /** LOCK_BATCH_MQ: the queues the broker granted to this client. */
  async lockBatchMQ(brokerAddr: string, group: string, mqs: MessageQueue[], timeoutMs = 1000): Promise<MessageQueue[]> {
    const body = { clientId: this.ctx.clientId, consumerGroup: group, mqSet: mqs };
    const r = await this.invoke(brokerAddr, Operations.LOCK_BATCH_MQ, {}, body, { timeoutMs });
    return r.body?.lockOKMQSet ?? [];
  }

  /** UNLOCK_BATCH_MQ, oneway (rebalance) or awaited (shutdown). */
  async unlockBatchMQ(
    brokerAddr: string,
    group: string,
    mqs: MessageQueue[],
    oneway: boolean,
    timeoutMs = 1000,
  ): Promise<void> {
    const body = { clientId: this.ctx.clientId, consumerGroup: group, mqSet: mqs };
    if (oneway) await this.invokeOneway(brokerAddr, Operations.UNLOCK_BATCH_MQ, {}, body);
    else await this.invoke(brokerAddr, Operations.UNLOCK_BATCH_MQ, {}, body, { timeoutMs });
  }

  /** UNREGISTER_CLIENT for one producer or consumer group. */
  async unregisterClient(
    brokerAddr: string,
    groups: { producerGroup?: string; consumerGroup?: string },
    timeoutMs?: number,
  ): Promise<void> {
    const header = {
      clientID: this.ctx.clientId,
      producerGroup: groups.producerGroup,
      consumerGroup: groups.consumerGroup,
    };
    await this.invoke(brokerAddr, Operations.UNREGISTER_CLIENT, header, undefined, { timeoutMs });
  }
}

function updateOffsetHeader(
  group: string,
  mq: MessageQueue,
  commitOffset: number,
): OperationRequest<typeof Operations.UPDATE_CONSUMER_OFFSET> {
  return { consumerGroup: group, topic: mq.topic, queueId: mq.queueId, commitOffset, bname: mq.brokerName };
}

const TWO_32 = 4294967296;
const MIN_RECORD = storedMessageSize(0, 0, 0);

/**
 * Refuses a pull answer whose offsets cannot be true, before the consumer moves to them
 * (PullOffsetError naming the broker and the field; the consumer pulls the same offset again
 * after its back-off). What a 4.9 or 5.x broker sends always passes:
 * * nextBeginOffset is never negative;
 * * FOUND, NO_NEW_MSG and NO_MATCHED_MSG never move backwards (the store's nextBeginOffset is the
 *   offset asked for plus the entries it scanned, or that offset itself; a slave that cannot check
 *   offsets answers the offset asked for), and FOUND never passes maxOffset;
 * * OFFSET_ILLEGAL corrects to an offset inside [minOffset, maxOffset], and moves backwards only
 *   from past the queue's end (a broker that lost data) or for 5.x's OFFSET_RESET (an
 *   administrator's reset);
 * * every message of a FOUND body has a queue offset in [offset asked for, nextBeginOffset):
 *   committed, one past it would carry the offset beyond messages never consumed.
 * Java's client checks none of it (PullAPIWrapper.processPullResult takes nextBeginOffset as it
 * comes, and the consumer commits it on NO_NEW_MSG).
 */
export function checkPullOffsets(
  addr: string,
  req: Pick<PullMessageRequest, 'topic' | 'queueId' | 'queueOffset'>,
  status: PullStatus,
  h: { nextBeginOffset: number; minOffset: number; maxOffset: number; offsetDelta?: number | undefined },
  remark: string | null,
  body: Buffer | null,
): void {
  const o = req.queueOffset;
  const next = h.nextBeginOffset;
  const refuse = (field: string, value: number, why: string): never => {
    throw new PullOffsetError({ addr, topic: req.topic, queueId: req.queueId, field, value, requestOffset: o, why });
  };
  if (next < 0) refuse('nextBeginOffset', next, 'is negative');
  if (status === 'OFFSET_ILLEGAL') {
    if (h.minOffset < 0 || h.minOffset > h.maxOffset)
      refuse('minOffset', h.minOffset, `is not in [0, maxOffset ${h.maxOffset}]`);
    if (next < h.minOffset || next > h.maxOffset)
      refuse('nextBeginOffset', next, `is outside the queue [${h.minOffset}, ${h.maxOffset}]`);
    if (next < o && o <= h.maxOffset && remark !== 'OFFSET_RESET')
      refuse(
        'nextBeginOffset',
        next,
        `moves backwards though the offset asked for is inside the queue [${h.minOffset}, ${h.maxOffset}]`,
      );
    return;
  }
  if (next < o) refuse('nextBeginOffset', next, 'is before the offset asked for');
  if (status !== 'FOUND') return;
  if (next > h.maxOffset) refuse('nextBeginOffset', next, `is past the queue's maxOffset ${h.maxOffset}`);
  if (body === null) return;
  // Record headers only (size, magic code, queue offset): what does not frame is left to the decoder.
  let p = 0;
  while (body.length - p >= MIN_RECORD) {
    const size = body.readInt32BE(p);
    const magic = body.readInt32BE(p + 4);
    if (
      (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) ||
      size < MIN_RECORD ||
      size > body.length - p
    )
      break;
    const hi = body.readInt32BE(p + 20);
    // A static topic's records carry the physical offset; the range asked for is the logic queue's.
    const q = hi * TWO_32 + body.readUInt32BE(p + 24) + (h.offsetDelta ?? 0);
    if (q < o || q >= next)
      refuse('queueOffset', q, `of the message at byte ${p} is outside the pull's range [${o}, ${next})`);
    p += size;
  }
}
