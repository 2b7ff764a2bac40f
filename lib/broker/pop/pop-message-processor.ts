import createDebug from '../../debug.js';
import {
  Operations,
  PermName,
  ResponseCode,
  RETRY_GROUP_TOPIC_PREFIX,
  decodeMessage,
  encodeStoredMessage,
  readInt64,
  type RemotingCommand,
} from '../../../protocol/internal.js';
import type { PopMessageRequestHeader } from '../../../protocol/custom-header/pop.js';
import {
  POP_ORDER_REVIVE_QUEUE,
  encodeMsgOffsetInfo,
  encodeOrderCountInfo,
  encodeReceiptHandle,
  encodeStartOffsetInfo,
  popRetryMarkOf,
  popRetryTopic,
  type MsgOffsetEntry,
  type OrderCountEntry,
  type StartOffsetEntry,
} from '../../../protocol/pop-extra-info.js';
import type { Clock } from '../../clock.js';
import type { RemotingConnection, RemotingServer } from '../../remoting/index.js';
import { popFilter } from './pop-filter.js';
import type { RecordMatch } from '../sql-filter.js';
import { topicNotExist, type BrokerContext } from '../processor/broker-context.js';
import { answerTo, fail, registerOperation, type Answer } from '../processor/request-processor.js';
import { ConsumerOrderInfoManager } from './consumer-order-info.js';
import { PopCheckpointTable, type PopCheckpoint } from './pop-checkpoints.js';
import { MessageRequestModeManager, QueryAssignmentProcessor } from './query-assignment-processor.js';
import { AckMessageProcessor } from './ack-message-processor.js';
import {
  BORN_TIME_SLACK_MS,
  MAX_POLLING_PER_KEY,
  MAX_POP_NUMS,
  POP_FROM_RETRY_PROBABILITY,
  REVIVE_QUEUE_NUM,
  resolvePopInvisibleBounds,
  type PopServiceOptions,
} from './pop-options.js';
import { reviveCheckpoints } from './pop-revive.js';
import { startPopTasks } from './pop-tasks.js';
import { PopLongPolling } from './pop-long-polling.js';
import { OrderLockRelease } from './order-lock-release.js';

export {
  DEFAULT_MAX_POP_INVISIBLE_TIME_MS,
  DEFAULT_MIN_POP_INVISIBLE_TIME_MS,
  MAX_EXTRA_INFO_LENGTH,
  extraInfoRemark,
  resolvePopInvisibleBounds,
  type PopServiceOptions,
} from './pop-options.js';

const log = createDebug('rocketwire:broker:pop');

interface PopResult {
  records: Buffer[];
  bytes: number;
  start: StartOffsetEntry[];
  msgs: MsgOffsetEntry[];
  /** Order pops: the orderCountInfo entries. */
  orderCounts: OrderCountEntry[];
  restNum: number;
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
  private readonly polling: PopLongPolling;
  private readonly lockRelease: OrderLockRelease;
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
    this.polling = new PopLongPolling(ctx.clock);
    this.lockRelease = new OrderLockRelease(ctx.clock, this.orderInfo, (topic, queueId) =>
      this.polling.notifyArrival(topic, queueId),
    );
  }

  private get clock(): Clock {
    return this.ctx.clock;
  }

  register(server: RemotingServer): void {
    registerOperation(server, Operations.POP_MESSAGE, ({ header, request, conn }) =>
      this.processPop(request, conn, header),
    );
    const notify = (topic: string, queueId: number): void => this.polling.notifyArrival(topic, queueId);
    new AckMessageProcessor(this.ctx, this.checkpoints, this.orderInfo, this.invisibleBounds, notify).register(server);
    new QueryAssignmentProcessor(this.ctx, this.modes).register(server);
  }

  /** Load the checkpoints, follow arrivals for long polling, start the revive scan and the periodic persist. */
  start(): void {
    this.checkpoints.load();
    this.orderInfo.load();
    this.modes.load();
    this.lockRelease.start();
    this.ctx.messageStore.onArrival((topic, queueId) => this.polling.notifyArrival(topic, queueId));
    const failed = (err: unknown): void => log('pop task failed: %O', err);
    this.stopTasks.push(
      startPopTasks(this.clock, this.options, this.checkpoints, this.orderInfo, () => this.revive(), failed),
    );
  }

  close(): void {
    for (const stop of this.stopTasks) stop();
    this.stopTasks.length = 0;
    this.lockRelease.close();
    this.polling.close();
    this.checkpoints.persist(true);
    this.orderInfo.persist(true);
  }

  /** Number of pops waiting for messages (POLLING_INFO's pollingNum, summed). */
  get pollingNum(): number {
    return this.polling.pollingNum;
  }

  // ------------------------------------------------------------------ POP_MESSAGE

  private processPop(
    req: RemotingCommand,
    conn: RemotingConnection,
    h: PopMessageRequestHeader,
  ): Answer | RemotingCommand | Promise<RemotingCommand | null> {
    const now = this.clock.now();
    const bornTime = h.bornTime > 0 ? h.bornTime : now;
    if (now - bornTime - h.pollTime > BORN_TIME_SLACK_MS) {
      return this.answer(req, ResponseCode.POLLING_TIMEOUT, h, now, emptyResult(), 'POLLING_TIMEOUT');
    }
    if (h.maxMsgNums > MAX_POP_NUMS) {
      return fail(
        ResponseCode.INVALID_PARAMETER,
        `the broker [${this.ctx.brokerName}] pop message is illegal: maxMsgNums ${h.maxMsgNums} > ${MAX_POP_NUMS}`,
      );
    }
    // not checked by Apache's broker: −1 made every popped message visible again at once
    const { min, max } = this.invisibleBounds;
    if (!(h.invisibleTime >= min && h.invisibleTime <= max)) {
      return fail(
        ResponseCode.INVALID_PARAMETER,
        `invisibleTime ${h.invisibleTime} is outside [${min}, ${max}] ms (the broker options minPopInvisibleTimeMs and maxPopInvisibleTimeMs)`,
      );
    }
    const config = this.ctx.topics.get(h.topic);
    if (!config) return topicNotExist(h.topic);
    if ((config.perm & PermName.PERM_READ) === 0)
      return fail(ResponseCode.NO_PERMISSION, `the topic[${h.topic}] peeking message is forbidden`);
    if (h.queueId >= config.readQueueNums) {
      return fail(
        ResponseCode.INVALID_PARAMETER,
        `queueId[${h.queueId}] is illegal, topic:[${h.topic}] topicConfig.readQueueNums:[${config.readQueueNums}] consumer:[${conn.remoteAddress}]`,
      );
    }
    const filter = popFilter(this.ctx, h);
    if ('code' in filter) return fail(filter.code, filter.remark);
    const run = (): { popTime: number; result: PopResult; reviveQid: number; budgetSpent: boolean } => {
      const popTime = this.clock.now();
      const reviveQid = h.order ? POP_ORDER_REVIVE_QUEUE : this.ckCounter++ % REVIVE_QUEUE_NUM;
      const sql = filter.newRecordMatcher?.() ?? null;
      const m: QueueMatch = { tags: filter.match, record: sql?.match ?? null };
      const result = this.popMessages(h, config.readQueueNums, popTime, reviveQid, m);
      return { popTime, reviveQid, result, budgetSpent: sql?.budgetSpent ?? false };
    };
    const first = run();
    // a pop whose SQL92 budget ran out before it found a match answers at once (nothing, restNum
    // counting what it left), so the client's next pop goes on evaluating instead of waiting here
    if (first.result.records.length > 0 || h.pollTime <= 0 || first.budgetSpent) {
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
    if (this.polling.count(key) >= MAX_POLLING_PER_KEY)
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
      this.polling.wait(key, waitMs, {
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
      });
    });
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
    // encoded now: a held pop answers later, on its connection, with this frame
    return answerTo(Operations.POP_MESSAGE, req, {
      code,
      remark: remark ?? (code === ResponseCode.SUCCESS ? 'FOUND' : 'NO_MESSAGE_IN_QUEUE'),
      header: {
        popTime,
        invisibleTime: h.invisibleTime,
        reviveQid,
        restNum: r.restNum,
        startOffsetInfo: encodeStartOffsetInfo(r.start),
        msgOffsetInfo: encodeMsgOffsetInfo(r.msgs),
        ...(h.order && r.orderCounts.length > 0 ? { orderCountInfo: encodeOrderCountInfo(r.orderCounts) } : {}),
      },
      body: code === ResponseCode.SUCCESS ? Buffer.concat(r.records, r.bytes) : undefined,
    }) as RemotingCommand;
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
    match: QueueMatch,
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
    match: QueueMatch,
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
    let got = store.getMessage(topic, queueId, offset, want, match.tags, match.record);
    if (
      got.status === 'OFFSET_TOO_SMALL' ||
      got.status === 'OFFSET_OVERFLOW_BADLY' ||
      got.status === 'OFFSET_FOUND_NULL'
    ) {
      // the stored offset is not a place in the queue: start again where the store says
      offset = got.nextBeginOffset;
      this.ctx.offsets.commit(h.consumerGroup, topic, queueId, offset);
      got = store.getMessage(topic, queueId, offset, want, match.tags, match.record);
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
      if (offsets.length > 0) store.stats.incGroupGetNums(h.consumerGroup, topic, offsets.length);
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

  /** PopReviveService (pop-revive.ts): unacked messages of expired checkpoints to the pop retry topic. */
  revive(): number {
    return reviveCheckpoints(this.ctx, this.checkpoints);
  }
}

/** The filter of one pop attempt: the tag codes, and for SQL92 the record matcher whose budget the whole pop shares. */
interface QueueMatch {
  tags: ((tagsCode: number) => boolean) | null;
  record: RecordMatch | null;
}

function emptyResult(): PopResult {
  return { records: [], bytes: 0, start: [], msgs: [], orderCounts: [], restNum: 0 };
}

function count(r: PopResult): number {
  return r.records.length;
}

export type { PopCheckpoint };
