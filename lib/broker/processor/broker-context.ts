import { ResponseCode, type RemotingCommand } from '../../../protocol/index.js';
import type { Clock } from '../../clock.js';
import type { ConsumerManager } from '../consumer-manager.js';
import type { ConsumerOffsetManager } from '../consumer-offset-manager.js';
import type { MessageStore } from '../message-store.js';
import { FAQ_APPLY_TOPIC } from '../name-server.js';
import type { PullRequestHoldService } from '../pull-request-hold.js';
import type { RebalanceLockManager } from '../rebalance-lock-manager.js';
import type { TopicConfigManager } from '../topic-config.js';
import { fail } from './request-processor.js';

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
}

/** TOPIC_NOT_EXIST with Java's remark. */
export function topicNotExist(req: RemotingCommand, topic: string): RemotingCommand {
  return fail(req, ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist, apply first please!${FAQ_APPLY_TOPIC}`);
}
