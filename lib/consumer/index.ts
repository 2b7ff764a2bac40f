export * from './allocate-strategy.js';
export * from './consume-types.js';
export {
  ConsumerBrokerError,
  UndecodableMessageError,
  type UndecodableDisposition,
  type BrokerReachable,
  type ConsumerBrokerRequest,
  type PushConsumerEvents,
  type HandlerResultInvalid,
} from './consumer-events.js';
export type { ConsumerHealth, QueueHealth, BrokerHealth, NameServerHealth } from './health.js';
export type { ConsumerStats, QueueStats } from './consumer-stats.js';
export * from './errors.js';
export * from './flow-control.js';
export type { MessageExt } from './message.js';
export { messageQueue, messageQueueToString, type MessageQueue } from '../../protocol/internal.js';
export * from './offset-store.js';
export * from './options.js';
export {
  PushConsumer,
  type ConsumerState,
  type MessageListenerEither,
  type PushConsumerListener,
  type PushConsumerHandler,
  type EachMessageHandler,
  type EachBatchHandler,
} from './push-consumer.js';
export { tagMatches } from './subscription.js';
export { LitePullConsumer, type LitePullConsumerState } from './lite-pull-consumer.js';
export { litePullConsumerDefaults, type LitePullConsumerOptions } from './lite-pull-options.js';
export type { PauseTarget } from './pause.js';
export {
  ConsumerEvents,
  type RebalanceEvent,
  type PullEvent,
  type FlowControlEvent,
  type OffsetCommitEvent,
  type RequestTimeoutEvent,
  type ConnectionEvent,
  type CrashEvent,
  type CrashedPart,
} from './events.js';
export { SqlFilterRefusedError, type SubscriptionExpression } from './sql-subscription.js';
export type { InflateOptions, InflateStats } from './inflate.js';
