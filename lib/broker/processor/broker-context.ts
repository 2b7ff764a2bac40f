import { ResponseCode, type RemotingCommand } from '../../../protocol/index.js';
import type { Clock } from '../../clock.js';
import type { ConsumerManager } from '../consumer-manager.js';
import type { ConsumerOffsetManager } from '../consumer-offset-manager.js';
import type { MessageStore } from '../message-store.js';
import { FAQ_APPLY_TOPIC } from '../name-server.js';
import type { PullRequestHoldService } from '../pull-request-hold.js';
import type { RebalanceLockManager } from '../rebalance-lock-manager.js';
import type { ReplyRequestTable } from '../reply/reply-request-table.js';
import type { TopicConfigManager } from '../topic-config.js';
import type { TransactionalMessageService } from '../transaction/transactional-message-service.js';
import { BrokerOptionError } from '../errors.js';
import { fail } from './request-processor.js';
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
}

export const DEFAULT_MAX_QUEUE_NUMS = 1024;
export const DEFAULT_MAX_TAGS_PER_SUBSCRIPTION = 1024;

/** The limits of `options` (a broker's tuning), defaults filled in; BrokerOptionError naming a value out of range. */
export function resolveBrokerLimits(options: { maxQueueNums?: number | undefined; maxTagsPerSubscription?: number | undefined }): BrokerLimits {
  const int = (name: string, v: number | undefined, dflt: number, max: number): number => {
    const n = v ?? dflt;
    if (!Number.isInteger(n) || n < 1 || n > max) throw new BrokerOptionError(name, `must be an integer in [1, ${max}], got ${String(v)}`);
    return n;
  };
  return {
    // 65 535: what a consume-stats body of one topic can list before it passes the frame limit
    maxQueueNums: int('maxQueueNums', options.maxQueueNums, DEFAULT_MAX_QUEUE_NUMS, 65_535),
    maxTagsPerSubscription: int('maxTagsPerSubscription', options.maxTagsPerSubscription, DEFAULT_MAX_TAGS_PER_SUBSCRIPTION, 1_000_000),
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
export function topicNotExist(req: RemotingCommand, topic: string): RemotingCommand {
  return fail(req, ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist, apply first please!${FAQ_APPLY_TOPIC}`);
}
