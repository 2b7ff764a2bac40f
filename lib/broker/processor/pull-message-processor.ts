import {
  FilterExpressionError,
  Operations,
  PermName,
  PullSysFlag,
  ResponseCode,
  TOO_MANY_TAGS,
  buildSubscriptionData,
  type PullMessageRequestHeader,
  type RemotingCommand,
  type SubscriptionData,
} from '../../../protocol/internal.js';
import type { RemotingConnection, RemotingServer } from '../../remoting/index.js';
import { tagMatcher } from '../message-filter.js';
import type { GetMessageStatus } from '../message-store.js';
import { FAQ_APPLY_TOPIC } from '../faq-remarks.js';
import { topicNotExist, type BrokerContext } from './broker-context.js';
import { answerTo, fail, registerOperation, type Answer } from './request-processor.js';
import { pullFilter } from './sql-filter-checks.js';
import { storedMessageCount } from '../broker-stats.js';

const PULL_STATUS_CODE: Record<GetMessageStatus, number> = {
  FOUND: ResponseCode.SUCCESS,
  MESSAGE_WAS_REMOVING: ResponseCode.PULL_RETRY_IMMEDIATELY,
  NO_MATCHED_MESSAGE: ResponseCode.PULL_RETRY_IMMEDIATELY,
  NO_MATCHED_LOGIC_QUEUE: ResponseCode.PULL_NOT_FOUND,
  NO_MESSAGE_IN_QUEUE: ResponseCode.PULL_NOT_FOUND,
  OFFSET_FOUND_NULL: ResponseCode.PULL_NOT_FOUND,
  OFFSET_OVERFLOW_BADLY: ResponseCode.PULL_OFFSET_MOVED,
  OFFSET_OVERFLOW_ONE: ResponseCode.PULL_NOT_FOUND,
  OFFSET_TOO_SMALL: ResponseCode.PULL_OFFSET_MOVED,
};

type PullAnswer = Answer | Promise<RemotingCommand | null> | null;
type PullOperation = typeof Operations.PULL_MESSAGE | typeof Operations.LITE_PULL_MESSAGE;

/**
 * PullMessageProcessor: PULL_MESSAGE and 5.x's LITE_PULL_MESSAGE (same header, same answer). A
 * pull that finds nothing and carries FLAG_SUSPEND is parked in the PullRequestHoldService and
 * re-run once, without suspending again, when a message arrives or its suspend time is over.
 */
export class PullMessageProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  register(server: RemotingServer): void {
    for (const op of [Operations.PULL_MESSAGE, Operations.LITE_PULL_MESSAGE]) {
      registerOperation(server, op, ({ header, request, conn }) => this.processPull(op, request, conn, header, true));
    }
  }

  private processPull(
    op: PullOperation,
    req: RemotingCommand,
    conn: RemotingConnection,
    h: PullMessageRequestHeader,
    allowSuspend: boolean,
  ): PullAnswer {
    const { topic, queueId, queueOffset, sysFlag } = h;
    const group = h.consumerGroup;
    const config = this.ctx.topics.get(topic);
    if (!config) return topicNotExist(topic);
    if ((config.perm & PermName.PERM_READ) === 0)
      return fail(ResponseCode.NO_PERMISSION, `the topic[${topic}] pulling message is forbidden`);
    if (queueId < 0 || queueId >= config.readQueueNums) {
      return fail(
        ResponseCode.SYSTEM_ERROR,
        `queueId[${queueId}] is illegal, topic:[${topic}] topicConfig.readQueueNums:[${config.readQueueNums}] consumer:[${conn.remoteAddress}]`,
      );
    }
    let sub: SubscriptionData;
    if (sysFlag & PullSysFlag.FLAG_SUBSCRIPTION) {
      // FilterAPI.build: the expression of the request itself (lite pull, postSubscriptionWhenPull)
      try {
        sub = buildSubscriptionData(topic, h.subscription, h.subVersion, h.expressionType ?? 'TAG', {
          maxTags: this.ctx.limits.maxTagsPerSubscription,
        });
      } catch (err) {
        if (!(err instanceof FilterExpressionError)) throw err;
        // Java's PullMessageProcessor answers a FilterAPI.build failure so, whatever the cause;
        // our own bound (Java has none) says which it is
        const why = err.message.startsWith(TOO_MANY_TAGS) ? `: ${err.message} (maxTagsPerSubscription)` : '';
        return fail(ResponseCode.SUBSCRIPTION_PARSE_FAILED, `parse the consumer's subscription failed${why}`);
      }
    } else {
      const info = this.ctx.consumers.find(group);
      if (!info)
        return fail(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's group info not exist${FAQ_APPLY_TOPIC}`);
      const registered = info.subscriptions.get(topic);
      if (!registered)
        return fail(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's subscription not exist${FAQ_APPLY_TOPIC}`);
      if (registered.subVersion < h.subVersion) {
        return fail(ResponseCode.SUBSCRIPTION_NOT_LATEST, `the consumer's subscription not latest`);
      }
      sub = registered;
    }
    const sql = pullFilter(this.ctx, sub, (sysFlag & PullSysFlag.FLAG_SUBSCRIPTION) !== 0);
    if ('code' in sql) return fail(sql.code, sql.remark);
    const match = tagMatcher(sub);
    const r = this.ctx.messageStore.getMessage(topic, queueId, queueOffset, h.maxMsgNums, match, sql.matchRecord);
    let code = PULL_STATUS_CODE[r.status];
    if ((r.status === 'NO_MATCHED_LOGIC_QUEUE' || r.status === 'NO_MESSAGE_IN_QUEUE') && queueOffset !== 0)
      code = ResponseCode.PULL_OFFSET_MOVED;

    // the commit piggyback happens on the first processing only, also when the request is parked
    if (allowSuspend && sysFlag & PullSysFlag.FLAG_COMMIT_OFFSET)
      this.ctx.offsets.commit(group, topic, queueId, h.commitOffset);

    if (code === ResponseCode.PULL_NOT_FOUND && allowSuspend && sysFlag & PullSysFlag.FLAG_SUSPEND) {
      return this.ctx.pullHold.hold(
        topic,
        queueId,
        conn,
        queueOffset,
        Math.max(0, h.suspendTimeoutMillis),
        match,
        () => {
          return answerTo(op, req, this.processPull(op, req, conn, h, false) as Answer | null);
        },
      );
    }
    if (code === ResponseCode.SUCCESS)
      this.ctx.messageStore.stats.incGroupGetNums(group, topic, storedMessageCount(r.records));
    return {
      code,
      remark: r.status,
      header: {
        suggestWhichBrokerId: 0,
        nextBeginOffset: r.nextBeginOffset,
        minOffset: r.minOffset,
        maxOffset: r.maxOffset,
        topicSysFlag: 0,
        groupSysFlag: 0,
      },
      body:
        code === ResponseCode.SUCCESS
          ? r.records.length === 1
            ? r.records[0]!
            : Buffer.concat(r.records, r.bytes)
          : undefined,
    };
  }
}
