import {
  createRequest,
  decodeConsumerListBody,
  decodeLockBatchResponseBody,
  decodeMessages,
  encodeLockBatchBody,
  PullMessageRequestHeader,
  PullMessageResponseHeader,
  RequestCode,
  ResponseCode,
  type MessageExt,
  type MessageQueue,
  type RemotingCommand,
} from '../../protocol/index.js';
import { stringFields } from '../../protocol/header-json.js';
import { brokerErrorFromResponse, checkResponse, type RemotingClient } from '../remoting/index.js';

/** Fields of PULL_MESSAGE's PullMessageRequestHeader (§5.1); numbers are sent as decimal strings. */
export interface PullMessageRequest {
  consumerGroup: string;
  topic: string;
  queueId: number;
  queueOffset: number;
  maxMsgNums: number;
  sysFlag: number;
  /** −1 when the consumer has no in-memory offset yet. */
  commitOffset: number;
  suspendTimeoutMillis: number;
  subVersion: number;
  expressionType?: string;
  subscription?: string;
  /** Broker name of the queue (the 4.9.5+ `bname` key). */
  bname?: string;
}

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
  readonly messages: MessageExt[];
}

/**
 * A PullResult whose messages are decoded on first access and kept in a field of this (young) object.
 * It used to be an object literal whose `messages` getter closed over a variable of the async
 * pullMessage call. Measured with --trace-gc-nvp: with that closure nearly every decoded message
 * survived two scavenges and was promoted (150 MB promoted per 300 000 messages, a mark-compact
 * every ~70 ms) and the consumer spent about a quarter of its CPU in the garbage collector; with
 * this class almost nothing is promoted (see bench/README.md). Keep decoded messages out of
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
  ) {}

  get messages(): MessageExt[] {
    if (this.decoded === null) this.decoded = this.bodyBytes ? decodeMessages(this.bodyBytes) : [];
    return this.decoded;
  }
}

/** Per-call context: the instance's timeouts and request stamping. */
export interface ClientApiContext {
  readonly remoting: RemotingClient;
  readonly clientId: string;
  readonly apiTimeoutMs: number;
  readonly language: string;
  readonly version: number;
  readonly serializeType: 'JSON' | 'ROCKETMQ';
}

const PULL_STATUS: Record<number, PullStatus> = {
  [ResponseCode.SUCCESS]: 'FOUND',
  [ResponseCode.PULL_NOT_FOUND]: 'NO_NEW_MSG',
  [ResponseCode.PULL_RETRY_IMMEDIATELY]: 'NO_MATCHED_MSG',
  [ResponseCode.PULL_OFFSET_MOVED]: 'OFFSET_ILLEGAL',
};

/** Response header numbers are int64 text; offsets stay far below 2^53 in practice, so Number is exact. */
function longField(res: RemotingCommand, key: string, def = 0): number {
  const v = res.extFields?.[key];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  return Number.isFinite(n) ? n : def;
}


/**
 * The client's RPCs to brokers (MQClientAPIImpl in Java). Every method names the broker address it
 * talks to; non-success answers become BrokerError from lib/remoting.
 */
export class MQClientAPI {
  protected readonly ctx: ClientApiContext;

  constructor(ctx: ClientApiContext) {
    this.ctx = ctx;
  }

  /** A request stamped with this client's language, version and serialize type. */
  createRequest(code: number, extFields: Record<string, string | number | boolean | undefined> | null, body?: Buffer | null, oneway = false): RemotingCommand {
    return createRequest(code, {
      // A typed header's encode() is used as is: ACL signing writes the signed fields to a copy.
      extFields: extFields === null ? null : stringFields(extFields),
      body: body ?? null,
      language: this.ctx.language,
      version: this.ctx.version,
      serializeType: this.ctx.serializeType,
      oneway,
    });
  }

  /** invoke + checkResponse (SUCCESS or one of `accept`). */
  async call(addr: string, request: RemotingCommand, timeoutMs = this.ctx.apiTimeoutMs, accept?: readonly number[]): Promise<RemotingCommand> {
    const res = await this.ctx.remoting.invoke(addr, request, { timeoutMs });
    return checkResponse(res, { addr, requestCode: request.code, ...(accept ? { accept } : {}) });
  }

  /** GET_CONSUMER_LIST_BY_GROUP: client ids of the group's live consumers. */
  async getConsumerIdList(brokerAddr: string, consumerGroup: string, timeoutMs?: number): Promise<string[]> {
    const res = await this.call(brokerAddr, this.createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { consumerGroup }), timeoutMs);
    if (!res.body || res.body.length === 0) return [];
    return decodeConsumerListBody(res.body).consumerIdList;
  }

  /** QUERY_CONSUMER_OFFSET: the stored offset, or −1 when the broker answers QUERY_NOT_FOUND. */
  async queryConsumerOffset(brokerAddr: string, group: string, mq: MessageQueue, timeoutMs?: number): Promise<number> {
    const req = this.createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
      consumerGroup: group,
      topic: mq.topic,
      queueId: mq.queueId,
      bname: mq.brokerName,
    });
    const res = await this.call(brokerAddr, req, timeoutMs, [ResponseCode.QUERY_NOT_FOUND]);
    if (res.code === ResponseCode.QUERY_NOT_FOUND) return -1;
    return longField(res, 'offset', -1);
  }

  /** UPDATE_CONSUMER_OFFSET, oneway as the push consumer sends it. */
  async updateConsumerOffsetOneway(brokerAddr: string, group: string, mq: MessageQueue, commitOffset: number): Promise<void> {
    await this.ctx.remoting.invokeOneway(brokerAddr, this.updateConsumerOffsetRequest(group, mq, commitOffset, true));
  }

  /** UPDATE_CONSUMER_OFFSET as a normal request (the shutdown flush waits for it). */
  async updateConsumerOffset(brokerAddr: string, group: string, mq: MessageQueue, commitOffset: number, timeoutMs?: number): Promise<void> {
    await this.call(brokerAddr, this.updateConsumerOffsetRequest(group, mq, commitOffset, false), timeoutMs);
  }

  private updateConsumerOffsetRequest(group: string, mq: MessageQueue, commitOffset: number, oneway: boolean): RemotingCommand {
    return this.createRequest(
      RequestCode.UPDATE_CONSUMER_OFFSET,
      { consumerGroup: group, topic: mq.topic, queueId: mq.queueId, commitOffset, bname: mq.brokerName },
      null,
      oneway,
    );
  }

  /** GET_MAX_OFFSET: one past the last message (0 for an empty queue). */
  async getMaxOffset(brokerAddr: string, mq: MessageQueue, timeoutMs?: number): Promise<number> {
    const req = this.createRequest(RequestCode.GET_MAX_OFFSET, { topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName });
    return longField(await this.call(brokerAddr, req, timeoutMs), 'offset');
  }

  /** GET_MIN_OFFSET: the smallest offset still stored. */
  async getMinOffset(brokerAddr: string, mq: MessageQueue, timeoutMs?: number): Promise<number> {
    const req = this.createRequest(RequestCode.GET_MIN_OFFSET, { topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName });
    return longField(await this.call(brokerAddr, req, timeoutMs), 'offset');
  }

  /** SEARCH_OFFSET_BY_TIMESTAMP (semantics differ between 4.9 and 5.x, §5.7). */
  async searchOffsetByTimestamp(brokerAddr: string, mq: MessageQueue, timestamp: number, timeoutMs?: number): Promise<number> {
    const req = this.createRequest(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, {
      topic: mq.topic,
      queueId: mq.queueId,
      timestamp,
      bname: mq.brokerName,
    });
    return longField(await this.call(brokerAddr, req, timeoutMs), 'offset');
  }

  /** CONSUMER_SEND_MSG_BACK (§5.3): `offset` is the message's commit-log offset. */
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
    const req = this.createRequest(RequestCode.CONSUMER_SEND_MSG_BACK, {
      offset: args.commitLogOffset,
      group: args.group,
      delayLevel: args.delayLevel,
      originMsgId: args.originMsgId,
      originTopic: args.originTopic,
      unitMode: false,
      maxReconsumeTimes: args.maxReconsumeTimes,
      bname: args.brokerName,
    });
    await this.call(brokerAddr, req, timeoutMs);
  }

  /** PULL_MESSAGE. `timeoutMs` must exceed suspendTimeoutMillis plus the broker's check period. */
  async pullMessage(brokerAddr: string, header: PullMessageRequest, timeoutMs: number, signal?: AbortSignal): Promise<PullResult> {
    const req = this.createRequest(RequestCode.PULL_MESSAGE, PullMessageRequestHeader.encode(header));
    const res = await this.ctx.remoting.invoke(brokerAddr, req, signal ? { timeoutMs, signal } : { timeoutMs });
    const status = PULL_STATUS[res.code];
    if (status === undefined) throw brokerErrorFromResponse(res, { addr: brokerAddr, requestCode: req.code });
    const h = PullMessageResponseHeader.decode(res.extFields);
    return new DecodedPullResult(
      status, h.nextBeginOffset, h.minOffset, h.maxOffset, h.suggestWhichBrokerId,
      status === 'FOUND' ? res.body : null,
    );
  }

  /** LOCK_BATCH_MQ: the queues the broker granted to this client. */
  async lockBatchMQ(brokerAddr: string, group: string, mqs: MessageQueue[], timeoutMs = 1000): Promise<MessageQueue[]> {
    const body = encodeLockBatchBody({ clientId: this.ctx.clientId, consumerGroup: group, mqSet: mqs });
    const res = await this.call(brokerAddr, this.createRequest(RequestCode.LOCK_BATCH_MQ, null, body), timeoutMs);
    if (!res.body || res.body.length === 0) return [];
    return decodeLockBatchResponseBody(res.body).lockOKMQSet;
  }

  /** UNLOCK_BATCH_MQ, oneway (rebalance) or awaited (shutdown). */
  async unlockBatchMQ(brokerAddr: string, group: string, mqs: MessageQueue[], oneway: boolean, timeoutMs = 1000): Promise<void> {
    const body = encodeLockBatchBody({ clientId: this.ctx.clientId, consumerGroup: group, mqSet: mqs });
    const req = this.createRequest(RequestCode.UNLOCK_BATCH_MQ, null, body, oneway);
    if (oneway) await this.ctx.remoting.invokeOneway(brokerAddr, req);
    else await this.call(brokerAddr, req, timeoutMs);
  }

  /** UNREGISTER_CLIENT for one producer or consumer group. */
  async unregisterClient(brokerAddr: string, groups: { producerGroup?: string; consumerGroup?: string }, timeoutMs?: number): Promise<void> {
    const req = this.createRequest(RequestCode.UNREGISTER_CLIENT, {
      clientID: this.ctx.clientId,
      producerGroup: groups.producerGroup,
      consumerGroup: groups.consumerGroup,
    });
    await this.call(brokerAddr, req, timeoutMs);
  }
}
