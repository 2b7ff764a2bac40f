import { encodeConsumerRunningInfo, type MessageQueue, type SubscriptionData } from '../../../protocol/internal.js';
import { instanceHealth } from '../../client/health.js';
import type { MQClientInstance } from '../../client/index.js';
import type { ConsumerHealth, QueueHealth } from '../core/health.js';
import type { ConsumerState } from '../core/lifecycle.js';
import { processQueueInfo, subscriptionInfo } from '../core/running-info.js';
import type { LitePullAssignment } from './lite-pull-assignment.js';
import type { LitePullConsumerConfig } from './lite-pull-options.js';
import type { LitePullRunning } from './lite-pull-running.js';

/** What the lite pull consumer's running info and health read of it. */
export interface LitePullInfoHost {
  readonly config: LitePullConsumerConfig;
  readonly state: ConsumerState;
  readonly startTimestamp: number;
  readonly assigned: LitePullAssignment;
  /** What start() made; null before. */
  readonly running: LitePullRunning | null;
  readonly instance: MQClientInstance | null;
  subscriptions(): SubscriptionData[];
}

/** GET_CONSUMER_RUNNING_INFO: the ConsumerRunningInfo body of a lite pull consumer (CONSUME_ACTIVELY). */
export function litePullRunningInfo(c: LitePullInfoHost): Buffer {
  const { config } = c;
  const properties: Record<string, string> = {
    PROP_CLIENT_VERSION: 'V4_9_8',
    PROP_CONSUMER_START_TIMESTAMP: String(c.startTimestamp),
    PROP_CONSUME_TYPE: 'CONSUME_ACTIVELY',
    PROP_NAMESERVER_ADDR: config.base.namesrvAddr,
    allocateMessageQueueStrategy: config.base.allocateStrategy.name,
    autoCommit: String(config.autoCommit),
    autoCommitIntervalMillis: String(config.autoCommitIntervalMs),
    consumeMaxSpan: String(config.consumeMaxSpan),
    consumerGroup: config.base.consumerGroup,
    messageModel: config.base.messageModel,
    pollTimeoutMillis: String(config.pollTimeoutMs),
    pullBatchSize: String(config.pullBatchSize),
    pullThresholdForAll: String(config.pullThresholdForAll),
    pullThresholdForQueue: String(config.pullThresholdForQueue),
    pullThresholdSizeForQueue: String(config.pullThresholdSizeForQueueMiB),
  };
  const mqTable: [MessageQueue, Record<string, unknown>][] = c.assigned
    .queues()
    .map(({ mq, pq }) => [mq, processQueueInfo(pq, c.running?.offsetStore.readMemory(mq) ?? -1)]);
  const subscriptionSet = c.subscriptions().map(subscriptionInfo);
  // The lite pull consumer sends no statusTable (it has no consume statistics).
  return encodeConsumerRunningInfo({ jstack: '', mqTable, properties, statusTable: {}, subscriptionSet });
}

/** LitePullConsumer.health(): as the push consumer's, the lag counted from the committed offsets. */
export function litePullHealth(c: LitePullInfoHost): ConsumerHealth {
  const inst = instanceHealth(c.instance);
  const queues: QueueHealth[] = c.assigned.queues().map((st) => {
    const committed = c.running?.offsetStore.readMemory(st.mq) ?? -1;
    const max = st.pr.brokerMaxOffset;
    return {
      topic: st.mq.topic,
      brokerName: st.mq.brokerName,
      queueId: st.mq.queueId,
      lastPullAnsweredAtMs: st.pr.lastAnsweredAtMs,
      lag: max >= 0 && committed >= 0 ? Math.max(0, max - committed) : -1,
      cached: st.pq.msgCount,
      paused: st.paused,
      flowControlled: null,
    };
  });
  return {
    state: c.state,
    ready: c.state === 'RUNNING' && inst.nameServer.lastAnswer !== null,
    group: c.config.base.consumerGroup,
    ...inst,
    queues,
  };
}
