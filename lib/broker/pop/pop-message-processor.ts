import createDebug from '../../debug.js';
import {
  FilterExpressionError,
  Operations,
  PermName,
  ResponseCode,
  RETRY_GROUP_TOPIC_PREFIX,
  buildSubscriptionData,
  createResponse,
  decodeMessage,
  encodeStoredMessage,
  readInt64,
  type RemotingCommand,
} from '../../../protocol/internal.js';
import { PopMessageResponseHeader, type PopMessageRequestHeader } from '../../../protocol/custom-header/pop.js';
import {
  POP_ORDER_REVIVE_QUEUE,
  decodeReceiptHandle,
  encodeMsgOffsetInfo,
  encodeOrderCountInfo,
  encodeReceiptHandle,
  encodeStartOffsetInfo,
  popRealTopic,
  popRetryMarkOf,
  popRetryTopic,
  type MsgOffsetEntry,
  type OrderCountEntry,
  type StartOffsetEntry,
} from '../../../protocol/pop-extra-info.js';
import type { Clock, ClockTimer } from '../../clock.js';
import type { RemotingConnection, RemotingServer } from '../../remoting/index.js';
import { BrokerOptionError } from '../errors.js';
import { optionValidator } from '../../validate.js';
import { tagMatcher } from '../message-filter.js';
import type { MessageInner } from '../message-record.js';
import { scheduleEvery } from '../periodic-task.js';
import { topicNotExist, type BrokerContext } from '../processor/broker-context.js';
import { fail, ok, registerOperation } from '../processor/request-processor.js';
import { ConsumerOrderInfoManager, ORDER_ACK_ILLEGAL } from './consumer-order-info.js';
import { PopCheckpointTable, checkpointKey, type PopCheckpoint } from './pop-checkpoints.js';
import { MessageRequestModeManager, QueryAssignmentProcessor } from './query-assignment-processor.js';

const log = createDebug('rocketwire:broker:pop');

/**
 * Bounds of a POP's invisibleTime (minPopInvisibleTimeMs / maxPopInvisibleTimeMs). Apache's broker
 * checks none (its proxy: 10 s – 12 h for a receive); the Java client pops with 5 s – 300 s and
 * rocketwire's SimpleConsumer with 1 s – 12 h, so 1 s – 12 h refuses only nonsense such as −1 (a
 * message visible again at once) and never what a real client sends.
 */
export const DEFAULT_MIN_POP_INVISIBLE_TIME_MS = 1000;
export const DEFAULT_MAX_POP_INVISIBLE_TIME_MS = 12 * 3600_000;
/**
 * Longest extraInfo (receipt handle) an ACK or CHANGE_INVISIBLETIME may carry: eight fields of
 * which only the broker name is text (at most a few dozen characters in any real cluster).
 */
export const MAX_EXTRA_INFO_LENGTH = 1024;
/** The fields of a receipt handle every 5.x broker writes and every client sends back. */
const EXTRA_INFO_FIELDS = 8;

/** PopAckConstants / BrokerConfig defaults of Apache 5.x. */
const REVIVE_QUEUE_NUM = 8;
const MAX_POP_NUMS = 32;
/** BrokerConfig.popFromRetryProbability: the share of pops that read the retry topic first. */
const POP_FROM_RETRY_PROBABILITY = 20;
/** PopMessageProcessor: a request born longer than pollTime + 500 ms ago is answered 210 at once. */
const BORN_TIME_SLACK_MS = 500;
/** PopLongPollingService: most waiting pops on one topic. */
const MAX_POLLING_PER_KEY = 1024;

export interface PopServiceOptions {
  /** How often the revive scan runs (ms on the broker's clock). Default 1000. */
  reviveIntervalMs?: number | undefined;
  /** How often checkpoints are written to disk. Default 5000 (the consumer offsets' period). */
  persistIntervalMs?: number | undefined;
  /** Percent of pops that read the pop retry topic first (popFromRetryProbability). Default 20. */
  popFromRetryProbability?: number | undefined;
  /** Random source in [0, 1) for the queue to start at and the retry draw. Default Math.random. */
  random?: (() => number) | undefined;
  /** Smallest invisibleTime a POP_MESSAGE may ask for (ms). Default 1000. */
  minPopInvisibleTimeMs?: number | undefined;
  /** Largest invisibleTime a POP_MESSAGE or CHANGE_INVISIBLETIME may ask for (ms). Default 43 200 000 (12 h). */
  maxPopInvisibleTimeMs?: number | undefined;
}

/** The invisible-time bounds of `o`, defaults filled in; BrokerOptionError naming a bad one. */
export function resolvePopInvisibleBounds(
  o: Pick<PopServiceOptions, 'minPopInvisibleTimeMs' | 'maxPopInvisibleTimeMs'>,
): { min: number; max: number } {
  const min = o.minPopInvisibleTimeMs ?? DEFAULT_MIN_POP_INVISIBLE_TIME_MS;
  const max = o.maxPopInvisibleTimeMs ?? DEFAULT_MAX_POP_INVISIBLE_TIME_MS;
  const check = optionValidator(BrokerOptionError, { atLeast: '≥' });
  check.safeIntAtLeast('minPopInvisibleTimeMs', min, 1);
  check.safeIntAtLeast('maxPopInvisibleTimeMs', max, min, `minPopInvisibleTimeMs (${min})`);
  return { min, max };
}

/**
 * Why an extraInfo (receipt handle) is refused before it is read, or null. Apache splits any
 * string on spaces and reads its first fields (100 000 fields pass); here it is at most
 * MAX_EXTRA_INFO_LENGTH characters and exactly 8 fields, as every broker writes it.
 */
export function extraInfoRemark(extraInfo: string): string | null {
  if (extraInfo.length > MAX_EXTRA_INFO_LENGTH)
    return `extraInfo is ${extraInfo.length} characters, more than ${MAX_EXTRA_INFO_LENGTH}: not a receipt handle`;
  let fields = 1;
  for (let i = extraInfo.indexOf(' '); i !== -1; i = extraInfo.indexOf(' ', i + 1)) fields++;
  if (fields !== EXTRA_INFO_FIELDS)
    return `extraInfo has ${fields} fields, not ${EXTRA_INFO_FIELDS} (ckQueueOffset popTime invisibleTime reviveQid retry brokerName queueId queueOffset)`;
  return null;
}

interface PopResult {
  records: Buffer[];
  bytes: number;
  start: StartOffsetEntry[];
  msgs: MsgOffsetEntry[];
  /** Order pops: the orderCountInfo entries. */
  orderCounts: OrderCountEntry[];
  restNum: number;
}

interface WaitingPop {
  topics: readonly string[];
  queueId: number;
  timer: ClockTimer;
  conn: RemotingConnection;
  /** The pop run again: an answer, or null to keep waiting. */
  retry: () => RemotingCommand | null;
  /** The answer when the poll time is over. */
  expire: () => RemotingCommand;
  resolve: (r: RemotingCommand | null) => void;
}

/**
 * POP consumption on the embedded broker (5.x: Apache's PopMessageProcessor, AckMessageProcessor,
 * ChangeInvisibleTimeProcessor, PopReviveService): POP_MESSAGE with long polling,
 * ACK_MESSAGE, BATCH_ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME, and the revive of every popped
 * message not acked within its invisible time into the pop retry topic `%RETRY%{group}_{topic}`.
 *
 * Differences from Apache, on purpose: a pop commits the group's offset past what it handed out
 * at once (Apache holds it in PopBufferMergeService until the checkpoint is stored), and the
 * checkpoints are a table persisted to `<store>/config/popCheckpoints.json` with the consumer
 * offsets, not timer messages in a revive topic. Order pops (`order=true`) are served as Apache
 * serves them (ConsumerOrderInfoManager): a queue is handed to one pop at a time, and the next
 * messages only once those are acked or visible again.
 */
export class PopService {
  readonly checkpoints: PopCheckpointTable;
  /** The last order pop of each queue per group (order=true). */
  readonly orderInfo: ConsumerOrderInfoManager;
  /** Request mode per topic@group (QUERY_ASSIGNMENT / SET_MESSAGE_REQUEST_MODE). */
  readonly modes: MessageRequestModeManager;
  private readonly waiting = new Map<string, Set<WaitingPop>>();
  private readonly stopTasks: Array<() => void> = [];
  private ckCounter = 0;
  private readonly random: () => number;
  private readonly retryProbability: number;
  private readonly invisibleBounds: { min: number; max: number };

  constructor(
    private readonly ctx: BrokerContext,
    storeDir: string,
    private readonly options: PopServiceOptions = {},
  ) {
    this.checkpoints = new PopCheckpointTable(storeDir);
    this.orderInfo = new ConsumerOrderInfoManager(storeDir);
    this.modes = new MessageRequestModeManager(storeDir);
    this.random = options.random ?? Math.random;
    this.retryProbability = options.popFromRetryProbability ?? POP_FROM_RETRY_PROBABILITY;
    this.invisibleBounds = resolvePopInvisibleBounds(options);
  }

  private get clock(): Clock {
    return this.ctx.clock;
  }

  register(server: RemotingServer): void {
    registerOperation(server, Operations.POP_MESSAGE, ({ header, request, conn }) =>
      this.processPop(request, conn, header),
    );
    registerOperation(server, Operations.ACK_MESSAGE, ({ header, request }) => {
      const badExtra = extraInfoRemark(header.extraInfo);
      if (badExtra) return fail(request, ResponseCode.INVALID_PARAMETER, badExtra);
      const r = this.ackOne(header.consumerGroup, header.topic, header.queueId, header.extraInfo, header.offset);
      return r === null ? ok(request) : fail(request, r.code, r.remark);
    });
    registerOperation(server, Operations.BATCH_ACK_MESSAGE, ({ body, request }) => this.processBatchAck(request, body));
    registerOperation(server, Operations.CHANGE_MESSAGE_INVISIBLETIME, ({ header, request }) =>
      this.processChangeInvisible(request, header),
    );
    new QueryAssignmentProcessor(this.ctx, this.modes).register(server);
  }

  /** Load the checkpoints, follow arrivals for long polling, start the revive scan and the periodic persist. */
  start(): void {
    this.checkpoints.load();
    this.orderInfo.load();
    this.modes.load();
    this.ctx.messageStore.onArrival((topic, queueId) => this.notifyArrival(topic, queueId));
    const failed = (err: unknown): void => log('pop task failed: %O', err);
    this.stopTasks.push(
      scheduleEvery(this.clock, this.options.reviveIntervalMs ?? 1000, () => this.revive(), failed),
      scheduleEvery(
        this.clock,
        this.options.persistIntervalMs ?? 5000,
        () => (this.checkpoints.persist(), this.orderInfo.persist()),
        failed,
      ),
    );
  }

  close(): void {
    for (const stop of this.stopTasks) stop();
    this.stopTasks.length = 0;
    for (const set of this.waiting.values()) {
      for (const w of set) {
        this.clock.clearTimeout(w.timer);
        w.resolve(null);
      }
    }
    this.waiting.clear();
    this.checkpoints.persist(true);
    this.orderInfo.persist(true);
  }

  /** Number of pops waiting for messages (POLLING_INFO's pollingNum, summed). */
  get pollingNum(): number {
    let n = 0;
    for (const s of this.waiting.values()) n += s.size;
    return n;
  }

  // ------------------------------------------------------------------ POP_MESSAGE

  private processPop(
    req: RemotingCommand,
    conn: RemotingConnection,
    h: PopMessageRequestHeader,
  ): RemotingCommand | Promise<RemotingCommand | null> {
    const now = this.clock.now();
    const bornTime = h.bornTime > 0 ? h.bornTime : now;
    if (now - bornTime - h.pollTime > BORN_TIME_SLACK_MS) {
      return this.answer(req, ResponseCode.POLLING_TIMEOUT, h, now, emptyResult(), 'POLLING_TIMEOUT');
    }
    if (h.maxMsgNums > MAX_POP_NUMS) {
      return fail(
        req,
        ResponseCode.INVALID_PARAMETER,
        `the broker [${this.ctx.brokerName}] pop message is illegal: maxMsgNums ${h.maxMsgNums} > ${MAX_POP_NUMS}`,
      );
    }
    // not checked by Apache's broker: −1 made every popped message visible again at once
    const { min, max } = this.invisibleBounds;
    if (!(h.invisibleTime >= min && h.invisibleTime <= max)) {
      return fail(
        req,
        ResponseCode.INVALID_PARAMETER,
        `invisibleTime ${h.invisibleTime} is outside [${min}, ${max}] ms (the broker options minPopInvisibleTimeMs and maxPopInvisibleTimeMs)`,
      );
    }
    const config = this.ctx.topics.get(h.topic);
    if (!config) return topicNotExist(req, h.topic);
    if ((config.perm & PermName.PERM_READ) === 0)
      return fail(req, ResponseCode.NO_PERMISSION, `the topic[${h.topic}] peeking message is forbidden`);
    if (h.queueId >= config.readQueueNums) {
      return fail(
        req,
        ResponseCode.INVALID_PARAMETER,
        `queueId[${h.queueId}] is illegal, topic:[${h.topic}] topicConfig.readQueueNums:[${config.readQueueNums}] consumer:[${conn.remoteAddress}]`,
      );
    }
    let match: ((tagsCode: number) => boolean) | null;
    try {
      const sub = buildSubscriptionData(h.topic, h.exp ?? '*', 0, h.expType ?? 'TAG', {
        maxTags: this.ctx.limits.maxTagsPerSubscription,
      });
      if (sub.expressionType !== 'TAG')
        return fail(req, ResponseCode.SYSTEM_ERROR, 'The broker does not support consumer to filter message by SQL92');
      match = tagMatcher(sub);
    } catch (err) {
      if (!(err instanceof FilterExpressionError)) throw err;
      return fail(
        req,
        ResponseCode.SUBSCRIPTION_PARSE_FAILED,
        `parse the consumer's subscription failed: ${err.message}`,
      );
    }
    const run = (): { popTime: number; result: PopResult; reviveQid: number } => {
      const popTime = this.clock.now();
      const reviveQid = h.order ? POP_ORDER_REVIVE_QUEUE : this.ckCounter++ % REVIVE_QUEUE_NUM;
      return { popTime, reviveQid, result: this.popMessages(h, config.readQueueNums, popTime, reviveQid, match) };
    };
    const first = run();
    if (first.result.records.length > 0 || h.pollTime <= 0) {
      return this.answer(
        req,
        first.result.records.length > 0 ? ResponseCode.SUCCESS : ResponseCode.POLLING_TIMEOUT,
        h,
        first.popTime,
        first.result,
        undefined,
        first.reviveQid,
      );
    }
    const retryTopic = popRetryTopic(h.topic, h.consumerGroup);
    const key = `${h.topic}@${h.consumerGroup}`;
    const set = this.waiting.get(key);
    if (set && set.size >= MAX_POLLING_PER_KEY)
      return this.answer(
        req,
        ResponseCode.POLLING_FULL,
        h,
        first.popTime,
        first.result,
        'POLLING_FULL',
        first.reviveQid,
      );
    const waitMs = Math.max(0, bornTime + h.pollTime - this.clock.now());
    return new Promise((resolve) => {
      const w: WaitingPop = {
        topics: [h.topic, retryTopic],
        queueId: h.queueId,
        conn,
        resolve,
        retry: () => {
          const r = run();
          return r.result.records.length > 0
            ? this.answer(req, ResponseCode.SUCCESS, h, r.popTime, r.result, undefined, r.reviveQid)
            : null;
        },
        expire: () => {
          const r = run();
          return this.answer(
            req,
            r.result.records.length > 0 ? ResponseCode.SUCCESS : ResponseCode.POLLING_TIMEOUT,
            h,
            r.popTime,
            r.result,
            undefined,
            r.reviveQid,
          );
        },
        timer: this.clock.setTimeout(() => this.finishWaiting(key, w, true), waitMs),
      };
      let s = this.waiting.get(key);
      if (!s) this.waiting.set(key, (s = new Set()));
      s.add(w);
    });
  }

  private finishWaiting(key: string, w: WaitingPop, expired: boolean): void {
    if (!expired) {
      if (w.conn.closed) {
        this.dropWaiting(key, w);
        w.resolve(null);
        return;
      }
      const r = w.retry();
      if (r === null) return;
      this.dropWaiting(key, w);
      w.resolve(r);
      return;
    }
    this.dropWaiting(key, w);
    w.resolve(w.conn.closed ? null : w.expire());
  }

  private dropWaiting(key: string, w: WaitingPop): void {
    this.clock.clearTimeout(w.timer);
    const s = this.waiting.get(key);
    if (!s) return;
    s.delete(w);
    if (s.size === 0) this.waiting.delete(key);
  }

  private notifyArrival(topic: string, queueId: number): void {
    for (const [key, set] of [...this.waiting]) {
      for (const w of [...set]) {
        if (!w.topics.includes(topic)) continue;
        if (w.queueId >= 0 && topic === w.topics[0] && w.queueId !== queueId) continue;
        this.finishWaiting(key, w, false);
      }
    }
  }

  private answer(
    req: RemotingCommand,
    code: number,
    h: PopMessageRequestHeader,
    popTime: number,
    r: PopResult,
    remark?: string,
    reviveQid = 0,
  ): RemotingCommand {
    return createResponse(req, code, {
      remark: remark ?? (code === ResponseCode.SUCCESS ? 'FOUND' : 'NO_MESSAGE_IN_QUEUE'),
      extFields: PopMessageResponseHeader.encode({
        popTime,
        invisibleTime: h.invisibleTime,
        reviveQid,
        restNum: r.restNum,
        startOffsetInfo: encodeStartOffsetInfo(r.start),
        msgOffsetInfo: encodeMsgOffsetInfo(r.msgs),
        ...(h.order && r.orderCounts.length > 0 ? { orderCountInfo: encodeOrderCountInfo(r.orderCounts) } : {}),
      }),
      body: code === ResponseCode.SUCCESS ? Buffer.concat(r.records, r.bytes) : null,
    });
  }

  /**
   * One pop: the retry topic first for popFromRetryProbability % of pops, otherwise only to fill a
   * short batch; the topic's queues from a random one (queueId < 0) or the one asked for. An
   * order pop reads no retry topic (its messages come back in their queue).
   */
  private popMessages(
    h: PopMessageRequestHeader,
    readQueueNums: number,
    popTime: number,
    reviveQid: number,
    match: ((tagsCode: number) => boolean) | null,
  ): PopResult {
    const r = emptyResult();
    const retryTopic = popRetryTopic(h.topic, h.consumerGroup);
    const retryFirst = !h.order && this.random() * 100 < this.retryProbability;
    const popRetry = (): void => {
      const rc = this.ctx.topics.get(retryTopic);
      if (!rc) return;
      for (let q = 0; q < rc.readQueueNums; q++) this.popQueue(h, retryTopic, q, popTime, reviveQid, match, r);
    };
    if (retryFirst) popRetry();
    if (h.queueId < 0) {
      const startAt = Math.floor(this.random() * readQueueNums);
      for (let i = 0; i < readQueueNums; i++)
        this.popQueue(h, h.topic, (startAt + i) % readQueueNums, popTime, reviveQid, match, r);
    } else {
      this.popQueue(h, h.topic, h.queueId, popTime, reviveQid, match, r);
    }
    if (!retryFirst && !h.order && count(r) < h.maxMsgNums) popRetry();
    return r;
  }

  /** The offset a group pops from: its committed one, or MIN/MAX by initMode, committed at once (getInitOffset). */
  private popOffset(group: string, topic: string, queueId: number, initMode: number): number {
    const committed = this.ctx.offsets.query(group, topic, queueId);
    if (committed !== undefined && committed >= 0) return committed;
    const store = this.ctx.messageStore;
    let offset: number;
    if (initMode === 0 || topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) offset = store.getMinOffset(topic, queueId);
    else if (store.getMinOffset(topic, queueId) <= 0 && store.isInMemory(topic, queueId, 0)) offset = 0;
    else offset = Math.max(0, store.getMaxOffset(topic, queueId) - 1);
    this.ctx.offsets.commit(group, topic, queueId, offset);
    return offset;
  }

  private popQueue(
    h: PopMessageRequestHeader,
    topic: string,
    queueId: number,
    popTime: number,
    reviveQid: number,
    match: ((tagsCode: number) => boolean) | null,
    r: PopResult,
  ): void {
    const store = this.ctx.messageStore;
    let offset = this.popOffset(h.consumerGroup, topic, queueId, h.initMode);
    // a queue whose last order pop is neither acked nor visible again gives nothing, and its
    // backlog is not counted in restNum (PopMessageProcessor#popMsgFromQueue)
    if (
      h.order &&
      this.orderInfo.checkBlock(h.attemptId ?? null, topic, h.consumerGroup, queueId, h.invisibleTime, popTime)
    )
      return;
    const want = h.maxMsgNums - count(r);
    if (want <= 0) {
      r.restNum += Math.max(0, store.getMaxOffset(topic, queueId) - offset);
      return;
    }
    let got = store.getMessage(topic, queueId, offset, want, match);
    if (
      got.status === 'OFFSET_TOO_SMALL' ||
      got.status === 'OFFSET_OVERFLOW_BADLY' ||
      got.status === 'OFFSET_FOUND_NULL'
    ) {
      // the stored offset is not a place in the queue: start again where the store says
      offset = got.nextBeginOffset;
      this.ctx.offsets.commit(h.consumerGroup, topic, queueId, offset);
      got = store.getMessage(topic, queueId, offset, want, match);
    }
    if (got.status === 'FOUND') {
      const offsets: number[] = [];
      const isRetry = topic !== h.topic;
      for (const run of got.records) {
        for (let p = 0; p + 28 <= run.length; ) {
          const size = run.readInt32BE(p);
          if (size <= 0 || p + size > run.length) break;
          const record = run.subarray(p, p + size);
          const queueOffset = readInt64(record, 20);
          offsets.push(queueOffset);
          const out = isRetry ? this.asOriginTopic(record, h, offset, popTime, reviveQid, topic, queueOffset) : record;
          r.records.push(out);
          r.bytes += out.length;
          p += size;
        }
      }
      const mark = popRetryMarkOf(topic);
      if (offsets.length > 0 && h.order) {
        // no checkpoint: the group's offset stays at the first offset not acked, so what is not
        // acked in time is handed out again from there (ConsumerOrderInfoManager#update)
        r.orderCounts.push(
          ...this.orderInfo.update(
            h.attemptId ?? null,
            mark,
            topic,
            h.consumerGroup,
            queueId,
            popTime,
            h.invisibleTime,
            offsets,
            this.clock.now(),
          ),
        );
        r.start.push({ retry: mark, queueId, startOffset: offset });
        r.msgs.push({ retry: mark, queueId, offsets });
      } else if (offsets.length > 0) {
        this.checkpoints.add({
          group: h.consumerGroup,
          topic,
          originTopic: h.topic,
          queueId,
          startOffset: offset,
          popTime,
          invisibleTime: h.invisibleTime,
          reviveQid,
          offsets,
          acked: new Set(),
        });
        r.start.push({ retry: mark, queueId, startOffset: offset });
        r.msgs.push({ retry: mark, queueId, offsets });
      }
      if (!h.order) this.ctx.offsets.commit(h.consumerGroup, topic, queueId, got.nextBeginOffset);
    } else if (got.status === 'NO_MATCHED_MESSAGE' || got.status === 'MESSAGE_WAS_REMOVING') {
      // filtered out: nothing to hand out, the offset moves past them (Apache's addCkMock)
      this.ctx.offsets.commit(h.consumerGroup, topic, queueId, got.nextBeginOffset);
    }
    r.restNum += Math.max(0, got.maxOffset - Math.max(offset, got.nextBeginOffset));
  }

  /**
   * A retry-topic record as Apache hands it out (popResponseReturnActualRetryTopic=false): the
   * topic rewritten to the one popped and POP_CK set by the broker, so the client keeps it.
   */
  private asOriginTopic(
    record: Buffer,
    h: PopMessageRequestHeader,
    ckOffset: number,
    popTime: number,
    reviveQid: number,
    retryTopic: string,
    queueOffset: number,
  ): Buffer {
    const m = decodeMessage(record, 0, { decompress: false });
    m.properties.POP_CK ??= encodeReceiptHandle({
      ckQueueOffset: ckOffset,
      popTime,
      invisibleTime: h.invisibleTime,
      reviveQid,
      retry: popRetryMarkOf(retryTopic),
      brokerName: this.ctx.brokerName,
      queueId: m.queueId,
      queueOffset,
    });
    return encodeStoredMessage({
      topic: h.topic,
      queueId: m.queueId,
      flag: m.flag,
      queueOffset: m.queueOffset,
      commitLogOffset: m.commitLogOffset,
      sysFlag: m.sysFlag,
      bornTimestamp: m.bornTimestamp,
      bornHost: m.bornHost,
      storeTimestamp: m.storeTimestamp,
      storeHost: m.storeHost,
      reconsumeTimes: m.reconsumeTimes,
      preparedTransactionOffset: m.preparedTransactionOffset,
      body: m.body,
      properties: m.properties,
    });
  }

  // ------------------------------------------------------------------ ACK, BATCH_ACK, CHANGE_INVISIBLETIME

  /** Range checks of AckMessageProcessor; null when the offset is in the queue. */
  private checkAckTarget(
    topic: string,
    queueId: number,
    offset: number,
    maxInclusive: boolean,
  ): { code: number; remark: string } | null {
    const config = this.ctx.topics.get(topic);
    if (!config)
      return { code: ResponseCode.TOPIC_NOT_EXIST, remark: `topic[${topic}] not exist, apply first please!` };
    if (queueId < 0 || queueId >= config.readQueueNums) {
      return {
        code: ResponseCode.MESSAGE_ILLEGAL,
        remark: `queueId[${queueId}] is illegal, topic:[${topic}] topicConfig.readQueueNums:[${config.readQueueNums}]`,
      };
    }
    const min = this.ctx.messageStore.getMinOffset(topic, queueId);
    const max = this.ctx.messageStore.getMaxOffset(topic, queueId);
    if (offset < min || (maxInclusive ? offset > max : offset >= max)) {
      return {
        code: ResponseCode.NO_MESSAGE,
        remark: `offset is illegal, key:${topic}@${queueId}, offset:${offset}, min:${min}, max:${max}`,
      };
    }
    return null;
  }

  /** ACK_MESSAGE: mark one offset of its checkpoint acked. Answers SUCCESS also for a checkpoint already revived, as Apache does. */
  private ackOne(
    group: string,
    topic: string,
    queueId: number,
    extraInfo: string,
    offset: number,
  ): { code: number; remark: string } | null {
    const bad = this.checkAckTarget(topic, queueId, offset, true);
    if (bad) return bad;
    const rh = decodeReceiptHandle(extraInfo);
    if (rh.reviveQid === POP_ORDER_REVIVE_QUEUE)
      return this.ackOrderly(group, topic, queueId, offset, rh.popTime, rh.invisibleTime);
    if (!this.checkpoints.ack(checkpointKey(group, topic, queueId, rh.ckQueueOffset, rh.popTime), offset)) {
      log(
        'ack of %s@%s queue %d offset %d: no open checkpoint (acked or revived already)',
        topic,
        group,
        queueId,
        offset,
      );
    }
    return null;
  }

  /**
   * AckMessageProcessor#ackOrderly: an offset below the group's is acked already; otherwise the
   * group's offset moves to the first offset of the pop not acked, and a queue no longer blocked
   * wakes the pops waiting on it.
   */
  private ackOrderly(
    group: string,
    topic: string,
    queueId: number,
    offset: number,
    popTime: number,
    invisibleTime: number,
  ): { code: number; remark: string } | null {
    const old = this.ctx.offsets.query(group, topic, queueId) ?? -1;
    if (offset < old) return null;
    const now = this.clock.now();
    const next = this.orderInfo.commitAndNext(topic, group, queueId, offset, popTime, now);
    if (next === ORDER_ACK_ILLEGAL) {
      return {
        code: ResponseCode.MESSAGE_ILLEGAL,
        remark: `offset is illegal, key:${topic}@${group}@${queueId}, old:${old}, commit:${offset}, next:${next}`,
      };
    }
    if (next >= 0) {
      this.ctx.offsets.commit(group, topic, queueId, next);
      if (!this.orderInfo.checkBlock(null, topic, group, queueId, invisibleTime, now))
        this.notifyArrival(topic, queueId);
    }
    return null;
  }

  private processBatchAck(
    req: RemotingCommand,
    body: {
      brokerName: string;
      acks: Array<{
        consumerGroup: string;
        topic: string;
        retry: '0' | '1' | '2';
        startOffset: number;
        queueId: number;
        reviveQueueId: number;
        popTime: number;
        invisibleTime: number;
        bits: number[];
      }>;
    },
  ): RemotingCommand {
    if (body.acks.length === 0) return fail(req, ResponseCode.NO_MESSAGE, 'empty batch ack');
    for (const a of body.acks) {
      const topic = popRealTopic(a.topic, a.consumerGroup, a.retry);
      const key = checkpointKey(a.consumerGroup, topic, a.queueId, a.startOffset, a.popTime);
      // AckMessageProcessor#processRequest: bits out of [min, max] are skipped without a word
      for (const bit of a.bits) {
        const offset = a.startOffset + bit;
        if (this.checkAckTarget(topic, a.queueId, offset, true)) continue;
        if (a.reviveQueueId === POP_ORDER_REVIVE_QUEUE) {
          // Apache answers a batch's order acks with the last one's result
          const bad = this.ackOrderly(a.consumerGroup, topic, a.queueId, offset, a.popTime, a.invisibleTime);
          if (bad) return fail(req, bad.code, bad.remark);
        } else this.checkpoints.ack(key, offset);
      }
    }
    return ok(req);
  }

  private processChangeInvisible(
    req: RemotingCommand,
    h: {
      consumerGroup: string;
      topic: string;
      queueId: number;
      extraInfo: string;
      offset: number;
      invisibleTime: number;
    },
  ): RemotingCommand {
    const bad = this.checkAckTarget(h.topic, h.queueId, h.offset, false);
    if (bad) return fail(req, bad.code, bad.remark);
    const badExtra = extraInfoRemark(h.extraInfo);
    if (badExtra) return fail(req, ResponseCode.INVALID_PARAMETER, badExtra);
    // 0 is fine (visible again now: a Java popDelayLevel of 0 s sends it); a negative or huge time is not
    const max = this.invisibleBounds.max;
    if (!(h.invisibleTime >= 0 && h.invisibleTime <= max)) {
      return fail(
        req,
        ResponseCode.INVALID_PARAMETER,
        `invisibleTime ${h.invisibleTime} is outside [0, ${max}] ms (the broker option maxPopInvisibleTimeMs)`,
      );
    }
    const rh = decodeReceiptHandle(h.extraInfo);
    const now = this.clock.now();
    if (rh.reviveQid === POP_ORDER_REVIVE_QUEUE) {
      // ChangeInvisibleTimeProcessor#processChangeInvisibleTimeForOrder: the message's own next
      // visible time; the receipt keeps its popTime, its invisible time counts from that
      const old = this.ctx.offsets.query(h.consumerGroup, h.topic, h.queueId) ?? -1;
      let visibleAt = rh.popTime + rh.invisibleTime;
      if (h.offset >= old) {
        visibleAt = now + h.invisibleTime;
        this.orderInfo.updateNextVisibleTime(h.topic, h.consumerGroup, h.queueId, h.offset, rh.popTime, visibleAt);
      }
      return ok(req, {
        extFields: {
          popTime: String(rh.popTime),
          invisibleTime: String(visibleAt - rh.popTime),
          reviveQid: String(rh.reviveQid),
        },
      });
    }
    const prefix = `${RETRY_GROUP_TOPIC_PREFIX}${h.consumerGroup}_`;
    const originTopic = h.topic.startsWith(prefix) ? h.topic.slice(prefix.length) : h.topic;
    // a change in the pop's own millisecond of its first offset would give the new checkpoint the
    // old one's key (group, topic, queue, start offset, popTime): the old one, with every other
    // message of the pop, was replaced and then acked. The new one starts a millisecond later.
    let popTime = now;
    while (this.checkpoints.get(checkpointKey(h.consumerGroup, h.topic, h.queueId, h.offset, popTime))) popTime++;
    // Apache writes the new checkpoint first, then acks the old one (ChangeInvisibleTimeProcessor)
    this.checkpoints.add({
      group: h.consumerGroup,
      topic: h.topic,
      originTopic,
      queueId: h.queueId,
      startOffset: h.offset,
      popTime,
      invisibleTime: h.invisibleTime,
      reviveQid: rh.reviveQid,
      offsets: [h.offset],
      acked: new Set(),
    });
    this.checkpoints.ack(checkpointKey(h.consumerGroup, h.topic, h.queueId, rh.ckQueueOffset, rh.popTime), h.offset);
    return ok(req, {
      extFields: { popTime: String(popTime), invisibleTime: String(h.invisibleTime), reviveQid: String(rh.reviveQid) },
    });
  }

  // ------------------------------------------------------------------ revive

  /** The retry copy of one popped message, or null when it cannot be read any more (dropped, logged). */
  private retryMessage(ck: PopCheckpoint, offset: number, target: string): MessageInner | null {
    const got = this.ctx.messageStore.getMessage(ck.topic, ck.queueId, offset, 1, null);
    const rec = got.status === 'FOUND' ? got.records[0] : undefined;
    if (!rec) {
      log('revive %s@%s queue %d offset %d: the message is gone', ck.topic, ck.group, ck.queueId, offset);
      return null;
    }
    const m = decodeMessage(rec, 0, { decompress: false });
    const props = { ...m.properties };
    delete props.POP_CK;
    if (m.reconsumeTimes === 0 || props['1ST_POP_TIME'] === undefined) props['1ST_POP_TIME'] = String(ck.popTime);
    return {
      topic: target,
      queueId: 0,
      flag: m.flag,
      sysFlag: m.sysFlag,
      bornTimestamp: m.bornTimestamp,
      bornHost: m.bornHost,
      reconsumeTimes: m.reconsumeTimes + 1,
      preparedTransactionOffset: 0,
      body: m.body,
      properties: props,
    };
  }

  /**
   * PopReviveService: every message of a checkpoint whose invisible time is over and that was not
   * acked goes to the pop retry topic (queue 0, reconsumeTimes + 1, 1ST_POP_TIME kept or set),
   * created with one queue; there is no DLQ step. A checkpoint of the retry topic itself is
   * revived into the same retry topic. A message that cannot be read any more is dropped.
   */
  revive(): number {
    let revived = 0;
    for (const ck of this.checkpoints.due(this.clock.now())) {
      const target = ck.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? ck.topic : popRetryTopic(ck.originTopic, ck.group);
      this.ctx.topics.ensure(target, 1);
      let failed = false;
      for (const offset of ck.offsets) {
        if (ck.acked.has(offset)) continue;
        const inner = this.retryMessage(ck, offset, target);
        if (inner) {
          const res = this.ctx.messageStore.putMessages([inner]);
          if (res.status !== 'PUT_OK') {
            // kept for the next scan (Apache backs off and tries again)
            failed = true;
            log('revive into %s failed: %s', target, res.remark ?? res.status);
            continue;
          }
          revived++;
        }
        // revived (or gone): never again for this checkpoint
        ck.acked.add(offset);
      }
      if (!failed) this.checkpoints.remove(ck);
    }
    return revived;
  }
}

function emptyResult(): PopResult {
  return { records: [], bytes: 0, start: [], msgs: [], orderCounts: [], restNum: 0 };
}

function count(r: PopResult): number {
  return r.records.length;
}

export type { PopCheckpoint };
