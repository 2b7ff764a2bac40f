export * from './core/allocate-strategy.js';
export * from './core/consume-types.js';
export type { BrokerReachable, PushConsumerEvents, HandlerResultInvalid } from './core/consumer-events.js';
export type { DuplicateStore, DuplicateGuardOptions } from './core/duplicate-guard.js';
export type { ConsumerHealth, QueueHealth, BrokerHealth, NameServerHealth } from './core/health.js';
export type { ConsumerStats, QueueStats } from './core/consumer-stats.js';
export * from './errors.js';
export * from './core/flow-control.js';
export type { MessageExt } from './core/message.js';
export { messageQueue, messageQueueToString, type MessageQueue } from '../../protocol/internal.js';
export * from './core/offset-store.js';
export * from './core/options.js';
export * from './core/consumer-config.js';
export {
  PushConsumer,
  type ConsumerState,
  type MessageListenerEither,
  type PushConsumerListener,
  type PushConsumerHandler,
  type EachMessageHandler,
  type EachBatchHandler,
} from './push/push-consumer.js';
export { tagMatches } from './core/subscription.js';
export { LitePullConsumer, type LitePullConsumerState } from './lite-pull/lite-pull-consumer.js';
export { litePullConsumerDefaults, type LitePullConsumerOptions } from './lite-pull/lite-pull-options.js';
export type { PauseTarget } from './push/pause.js';
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
} from './core/events.js';
export type { SubscriptionExpression } from './core/sql-subscription.js';
export type { InflateOptions, InflateStats } from './core/inflate.js';
