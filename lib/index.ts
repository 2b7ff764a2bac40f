/**
 * The client side of Apache RocketMQ's remoting protocol: push, lite pull and POP consumers,
 * producers (transactions, timers, request–reply) and the admin client. The embedded name server +
 * broker is `rocketwire/broker`, the capture decoder `rocketwire/capture`, the codec
 * `rocketwire/protocol`.
 *
 * @module rocketwire
 */
// The public API of `rocketwire`: what an application that consumes from, produces to, embeds or
// watches RocketMQ needs, and nothing else.
//
// The rule for a name to be here:
//  * a thing the application creates or calls: PushConsumer, Producer, AdminClient, RemotingClient
//    for raw requests, the clocks;
//  * a type the application writes down: the options it passes, the results, records, statuses,
//    contexts and handler types it receives (so it can name them in its own signatures);
//  * an error it catches, with the base classes of the hierarchy (RocketwireError, RemotingError…).
// Not here: the runtime behind those classes (client instance, client API, services, rebalance,
// process queues, offset stores, scheduled tasks, the broker's store and processors), helpers and
// aliases, and the codec: that is `rocketwire/protocol`, apart from the few codec types the runtime
// hands out (MessageExt, MessageQueue) and the codec errors it lets through; nor the embedded
// broker (`rocketwire/broker`, lib/broker/public.ts) and the capture decoder (`rocketwire/capture`,
// lib/capture/public.ts), which an application that produces and consumes never loads. Internal
// code, tests and benchmarks import what they need from the folders' own index.ts files.
//
// test/api/api-report.txt lists every name exported here with its kind; `npm run api-report`
// regenerates it and test/api/api-report.test.ts fails when it is out of date.

// Push consumer.
export {
  PushConsumer,
  ConsumeConcurrentlyStatus,
  ConsumeOrderlyStatus,
  ConsumerOptionError,
  ConsumerStateError,
  OffsetFileError,
  UndecodableMessageError,
  type UndecodableDisposition,
  type InflateOptions,
  type InflateStats,
  ConsumerBrokerError,
  SqlFilterRefusedError,
  type SubscriptionExpression,
  type PushConsumerEvents,
  type BrokerReachable,
  type ConsumerBrokerRequest,
  type PushConsumerOptions,
  type ConsumerState,
  type MessageListenerConcurrently,
  type MessageListenerOrderly,
  type ConsumeConcurrentlyContext,
  type ConsumeOrderlyContext,
  type AllocateMessageQueueStrategy,
  type AllocateStrategyOption,
  type ConsumerStats,
  type QueueStats,
  type FlowControlReason,
  type PauseTarget,
  ConsumerEvents,
} from './consumer/index.js';
// Node's idioms: handler shapes, health(), the logger option.
export type {
  PushConsumerHandler,
  EachMessageHandler,
  EachBatchHandler,
  HandlerResultInvalid,
  ConsumerHealth,
  QueueHealth,
  BrokerHealth,
  NameServerHealth,
} from './consumer/index.js';
// The duplicate guard (the consumers' duplicateGuard option).
export type { DuplicateStore, DuplicateGuardOptions } from './consumer/index.js';
// The payloads of the instrumentation events (PushConsumerEvents[E][0], ProducerEventMap[E][0]),
// so that a listener can name them.
export type {
  RebalanceEvent,
  PullEvent,
  FlowControlEvent,
  OffsetCommitEvent,
  CrashEvent,
  CrashedPart,
} from './consumer/index.js';
export type { RequestTimeoutEvent, ConnectionEvent } from './consumer/index.js';
export type { SendEvent } from './producer/index.js';
export type { PullStatus } from './client/index.js';
export type { Logger, LoggerOption } from './logger.js';
export type { NameServerStatus } from './client/index.js';

// Metrics (OpenTelemetry, the RocketMQ 5.x clients' instruments) and the events' names; the
// payload types are PushConsumerEvents[E][0] and ProducerEventMap[E][0].
export type { MetricsOptions, TracingOptions } from './metrics/index.js';
// The pre-aggregating provider: the same instruments at a bucket increment per record, handed to
// an SDK reader as a metric producer (lib/metrics/README.md).
export { AggregatingMeterProvider } from './metrics/aggregating-meter.js';

// Message trace (enableTrace on Producer and PushConsumer): the records, to read a trace topic.
export {
  decodeTraceData,
  TraceSendError,
  type TraceOptions,
  type TraceContext,
  type TraceBean,
  type TraceType,
} from './trace/index.js';
// Lite pull consumer (DefaultLitePullConsumer).
export { LitePullConsumer, type LitePullConsumerOptions, type LitePullConsumerState } from './consumer/index.js';
// POP consumer (5.x brokers): receive / ack / changeInvisibleDuration.
export { SimpleConsumer, type ReceivedMessage, type AckStatus } from './consumer/pop/simple-consumer.js';
export type { SimpleConsumerOptions } from './consumer/pop/simple-consumer-options.js';
export { PopNotSupportedError } from './consumer/errors.js';

// Producer.
export {
  Producer,
  TransactionProducer,
  selectMessageQueueByHash,
  ProducerOptionError,
  ProducerStateError,
  MessageValidationError,
  SendFailedError,
  NoRouteError,
  createReplyMessage,
  RequestTimeoutError,
  SendBackpressureTimeoutError,
  type RequestMessageLike,
  type ProducerOptions,
  type SendPathOptions,
  type Message,
  type SendOptions,
  type SendResult,
  type SendStatus,
  type MessageQueueSelector,
  type ProducerStats,
  type SendAttemptFailure,
  LocalTransactionState,
  type LocalTransactionResult,
  type ProducerHealth,
  type TransactionListener,
  type TransactionProducerOptions,
  type TransactionSendResult,
  type TransactionStats,
  ProducerEvents,
  type ProducerEventMap,
} from './producer/index.js';

// Admin client: mqadmin's operations (lib/admin/README.md); its options are ClientOptions.
export { AdminClient } from './admin/index.js';
export type { MessageTraceQuery, MessageTraceView } from './admin/index.js';

// Options and errors shared by consumers and producers (the client instance behind them).
export {
  MQClientError,
  ClientStateError,
  NameServerUnavailableError,
  AddressServerError,
  ClientOptionError,
  ResponseFieldError,
  RouteLimitError,
  PullOffsetError,
  type ClientOptions,
} from './client/index.js';

// Remoting: the raw request/response client, and the errors every request may end in.
export {
  RemotingClient,
  RemotingError,
  RemotingTimeoutError,
  RemotingConnectError,
  RemotingClosedError,
  RemotingAbortError,
  RemotingBackpressureError,
  RemotingClientClosedError,
  RemotingUnmatchedResponsesError,
  AddressError,
  BrokerError,
  type RemotingClientOptions,
  type InvokeOptions,
  type RequestProcessor,
  type AclCredentials,
} from './remoting/index.js';

// The one clock of the runtime (consumer, client instance, producer and broker take it as `clock`).
export { ManualClock, systemClock, type Clock, type ClockTimer } from './clock.js';

// Codec values the runtime hands out, and the root of every rocketwire error.
export {
  RocketwireError,
  OptionError,
  ProtocolError,
  FilterExpressionError,
  SqlParseError,
  SqlLimitError,
  type MessageExt,
  type MessageQueue,
  type CompressionType,
} from '../protocol/index.js';
