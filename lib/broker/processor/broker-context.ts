import { ResponseCode, SQL92_DEFAULT_MAX_LENGTH, SQL92_DEFAULT_MAX_NODES } from '../../../protocol/index.js';
import type { Clock } from '../../clock.js';
import type { ConsumerManager } from '../consumer-manager.js';
import type { ConsumerOffsetManager } from '../consumer-offset-manager.js';
import type { MessageStore } from '../message-store.js';
import { FAQ_APPLY_TOPIC } from '../faq-remarks.js';
import type { PullRequestHoldService } from '../pull-request-hold.js';
import type { RebalanceLockManager } from '../rebalance-lock-manager.js';
import type { ReplyRequestTable } from '../reply/reply-request-table.js';
import type { TopicConfigManager } from '../topic-config.js';
import type { TransactionalMessageService } from '../transaction/transactional-message-service.js';
import { brokerOptionCheck } from '../option-check.js';
import { fail, type Answer } from './request-processor.js';
import type { TimerSettings } from '../timer/index.js';

/**
 * Bounds on what a request may ask for. Apache's broker has neither (it creates a topic of
 * 2 147 483 647 queues and parses any number of tags); ours refuses past them with
 * INVALID_PARAMETER (SUBSCRIPTION_PARSE_FAILED for a pull's own expression) and a remark naming
 * the field and the bound.
 */
export interface BrokerLimits {
  /** Most read or write queues of one topic (UPDATE_AND_CREATE_TOPIC, auto-creation). Default 1024. */
  maxQueueNums: number;
  /** Most tags of one TAG subscription (a pull's expression, a heartbeat's tagsSet / codeSet). Default 1024. */
  maxTagsPerSubscription: number;
  /** Most characters of a SQL92 expression (a pull's own, a heartbeat's, CHECK_CLIENT_CONFIG's). Default 65536. */
  sqlMaxLength: number;
  /** Most nodes of a SQL92 expression's tree, counted as evaluated. Default 4096. */
  sqlMaxNodes: number;
  /** Evaluation steps one SQL92 pull may spend before it answers what matched so far (sql-filter.ts). Default 100000. */
  sqlEvaluationBudget: number;
}

export const DEFAULT_MAX_QUEUE_NUMS = 1024;
export const DEFAULT_MAX_TAGS_PER_SUBSCRIPTION = 1024;
/** About 4 ms of evaluation on a 2-core VM (26 000 nodes per ms), far below the 20 ms a request may hold the loop. */
export const DEFAULT_SQL_EVALUATION_BUDGET = 100_000;

/** The limits of `options` (a broker's tuning), defaults filled in; BrokerOptionError naming a value out of range. */
export function resolveBrokerLimits(options: {
  maxQueueNums?: number | undefined;
  maxTagsPerSubscription?: number | undefined;
  sqlMaxLength?: number | undefined;
  sqlMaxNodes?: number | undefined;
  sqlEvaluationBudget?: number | undefined;
}): BrokerLimits {
  const int = (name: string, v: number | undefined, dflt: number, max: number): number =>
    brokerOptionCheck.intIn(name, v ?? dflt, 1, max);
  return {
    // 65 535: what a consume-stats body of one topic can list before it passes the frame limit
    maxQueueNums: int('maxQueueNums', options.maxQueueNums, DEFAULT_MAX_QUEUE_NUMS, 65_535),
    maxTagsPerSubscription: int(
      'maxTagsPerSubscription',
      options.maxTagsPerSubscription,
      DEFAULT_MAX_TAGS_PER_SUBSCRIPTION,
      1_000_000,
    ),
    // a frame is at most 16 MiB; past it no request can carry the expression anyway
    sqlMaxLength: int('sqlMaxLength', options.sqlMaxLength, SQL92_DEFAULT_MAX_LENGTH, 16 * 1024 * 1024),
    sqlMaxNodes: int('sqlMaxNodes', options.sqlMaxNodes, SQL92_DEFAULT_MAX_NODES, 16 * 1024 * 1024),
    sqlEvaluationBudget: int(
      'sqlEvaluationBudget',
      options.sqlEvaluationBudget,
      DEFAULT_SQL_EVALUATION_BUDGET,
      2 ** 31 - 1,
    ),
  };
}

/** What the processors share of one broker (Java's BrokerController, as far as they need it). */
export interface BrokerContext {
  readonly brokerName: string;
  readonly clusterName: string;
  readonly clock: Clock;
  /** Opened by Broker.start, before any request is served. */
  readonly messageStore: MessageStore;
  readonly topics: TopicConfigManager;
  readonly offsets: ConsumerOffsetManager;
  readonly consumers: ConsumerManager;
  readonly pullHold: PullRequestHoldService;
  readonly locks: RebalanceLockManager;
  /** Delay of each level in ms (messageDelayLevel). */
  readonly delayLevels: readonly number[];
  /** Create unknown topics on first send from TBW102. */
  readonly autoCreateTopic: boolean;
  readonly limits: BrokerLimits;
  /** Half messages, op records and the check loop (transaction/). */
  readonly transactions: TransactionalMessageService;
  /** 5.x timer messages (timer/timer-message-store.ts). */
  readonly timerSettings: TimerSettings;
  /** SQL92 subscriptions are served (Java's enablePropertyFilter, default false). */
  readonly enablePropertyFilter: boolean;
  /** Requests waiting for a reply (reply/reply-request-table.ts); null when replies are not checked. */
  readonly replyRequests: ReplyRequestTable | null;
}

/** TOPIC_NOT_EXIST with Java's remark. */
export function topicNotExist(topic: string): Answer {
  return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist, apply first please!${FAQ_APPLY_TOPIC}`);
}
