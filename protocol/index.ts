/**
 * The pure codec of RocketMQ remoting: frames, commands, codes, typed headers, the operation
 * table, stored messages, batches, message ids and JSON bodies. No I/O.
 *
 * @module rocketwire/protocol
 */
// The public API of `rocketwire/protocol`: the pure codec a protocol user needs to speak RocketMQ
// remoting (a proxy, a capture tool, a test peer, another client): frames and the streaming frame
// decoder, commands, codes, the typed headers and the operation table, stored messages, batches,
// message ids, flags, JSON bodies, and the errors all of these throw.
//
// The rule for a name to be here: a user builds, encodes, decodes or inspects protocol values with
// it, or names its type. Not here: the building blocks of the codec (int64, CRC, xxhash, LZ4
// frames, socket-address bytes, header field definitions and the header serializers behind
// encodeCommand/decodeCommand, hex and hash helpers, body shape readers) and aliases; lib/,
// bench/ and test/ import those from the files that define them.
//
// test/api/api-report.txt lists every name exported here with its kind; `npm run api-report`
// regenerates it and test/api/api-report.test.ts fails when it is out of date.

// Errors: every malformed input ends in a ProtocolError (or a subclass) carrying the byte offset.
export {
  RocketwireError,
  OptionError,
  ProtocolError,
  HeaderFieldError,
  UnsupportedCompressionError,
  InflatedBodyTooLargeError,
  FilterExpressionError,
  PropertiesLimitError,
} from './errors.js';

// Frames and commands: build, encode (JSON or ROCKETMQ headers), split a byte stream, decode.
export {
  isResponse,
  isOneway,
  createRequest,
  createResponse,
  type RemotingCommand,
  type CommandInit,
} from './command.js';
export {
  encodeCommandParts,
  encodeCommand,
  decodeCommand,
  DEFAULT_MAX_FRAME_LENGTH,
  type FrameDecoderOptions,
  FrameDecoder,
} from './frame.js';
export type { HeaderEncodeOptions } from './header-json.js';

// Request, response, language and serialize codes; RemotingCommand flag bits; MQVersion.
export {
  requestCodeName,
  responseCodeName,
  RequestCode,
  type RequestCodeName,
  type RequestCodeValue,
  ResponseCode,
  type ResponseCodeName,
  LanguageCode,
  type LanguageName,
  RemotingFlag,
  SerializeType,
  type SerializeTypeName,
  MQVersion,
} from './codes.js';

// Typed custom headers: each is a value ({ encode, decode } of extFields) and a type of the same name.
export {
  ViewMessageRequestHeader,
  CreateTopicRequestHeader,
  QueryMessageRequestHeader,
  QueryMessageResponseHeader,
  RegisterBrokerRequestHeader,
  RegisterBrokerResponseHeader,
  EndTransactionRequestHeader,
  CheckTransactionStateRequestHeader,
  GetRouteInfoRequestHeader,
  GetConsumerListByGroupRequestHeader,
  NotifyConsumerIdsChangedRequestHeader,
  UnregisterClientRequestHeader,
  HeartbeatRequestHeader,
  LockBatchMqRequestHeader,
  UnlockBatchMqRequestHeader,
  ResetOffsetRequestHeader,
  GetConsumerStatusRequestHeader,
  GetConsumerRunningInfoRequestHeader,
  ConsumeMessageDirectlyResultRequestHeader,
  QueryConsumerOffsetRequestHeader,
  QueryConsumerOffsetResponseHeader,
  UpdateConsumerOffsetRequestHeader,
  UpdateConsumerOffsetResponseHeader,
  type HeaderCodec,
  type HeaderFields,
  PullMessageRequestHeader,
  PullMessageResponseHeader,
  GetMessageStatus,
  GetMaxOffsetRequestHeader,
  GetMaxOffsetResponseHeader,
  GetMinOffsetRequestHeader,
  GetMinOffsetResponseHeader,
  SearchOffsetRequestHeader,
  SearchOffsetResponseHeader,
  GetEarliestMsgStoretimeRequestHeader,
  GetEarliestMsgStoretimeResponseHeader,
  sendHeaderV1ToV2,
  sendHeaderV2ToV1,
  SendMessageRequestHeader,
  SendMessageRequestHeaderV2,
  SendMessageResponseHeader,
  ConsumerSendMsgBackRequestHeader,
  RecallMessageRequestHeader,
  RecallMessageResponseHeader,
} from './custom-header/index.js';
// A timer message's recall handle (RecallMessageHandle.HandleV1): what it names, and its making.
export { decodeRecallHandle, encodeRecallHandle, type RecallHandle } from './recall-handle.js';

// Headers and bodies of the broker's admin requests (consume stats, topic config, check client
// config, topic list).
export {
  GetConsumeStatsRequestHeader,
  GetTopicConfigRequestHeader,
  CheckClientRequestHeader,
} from './custom-header/broker-admin.js';
export {
  CheckClientRequestBody,
  TopicConfigBody,
  ConsumeStats,
  TopicList,
  type OffsetWrapper,
} from './body/broker-admin-bodies.js';

// The operation table: request/response header and body codecs of every request code lib sends
// or serves.
export {
  operationOf,
  decodeSendMessageRequestHeader,
  type BodyCodec,
  type BodySpec,
  type Operation,
  type OperationRequest,
  type OperationResponse,
  type OperationRequestBody,
  type OperationResponseBody,
  EmptyHeader,
  Operations,
  type OperationName,
} from './operations.js';

// Stored messages (pull bodies, commit log records), batches, properties, compression, flags and ids.
export type {
  MessageExt,
  StoredMessageInit,
} from './message-ext.js';
export {
  decodeMessages,
  decodeMessagesSkipping,
  type SkippingDecodeResult,
  type UndecodableRecord,
  countStoredRecords,
  decodeMessage,
  type DecodeMessagesOptions,
} from './message-decoder.js';
export {
  inflateMessages,
  type InflateRoundOptions,
  type InflateRound,
  type RefusedMessage,
} from './message-inflate.js';
export { encodeStoredMessage } from './message-encoder.js';
export {
  storedMessageSize,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
} from './message-record.js';
export {
  encodeProperties,
  decodeProperties,
  MAX_PROPERTIES_ENTRIES,
  MAX_PROPERTIES_BYTES,
  type EncodePropertiesOptions,
} from './properties.js';
export {
  encodeBatch,
  decodeBatch,
  type BatchMessage,
  type DecodedBatchMessage,
  type DecodeBatchOptions,
} from './batch.js';
export { decompressBody, decompress } from './compression.js';
export { compress, type CompressOptions } from './compression-encode.js';
export {
  compressionTypeOf,
  compressionSysFlag,
  transactionType,
  buildPullSysFlag,
  clearCommitOffsetFlag,
  isReadable,
  isWriteable,
  isInherited,
  perm2String,
  MessageSysFlag,
  type CompressionType,
  PullSysFlag,
  PermName,
} from './sys-flag.js';
export {
  createOffsetMsgId,
  decodeOffsetMsgId,
  createUniqKey,
  type OffsetMsgId,
  type UniqKeyOptions,
  UniqKeyGenerator,
} from './message-id.js';
export {
  retryTopic,
  dlqTopic,
  isRetryTopic,
  MessageConst,
  RETRY_GROUP_TOPIC_PREFIX,
  DLQ_GROUP_TOPIC_PREFIX,
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  CLIENT_INNER_PRODUCER_GROUP,
} from './message-const.js';
export {
  parseDelayLevels,
  delayLevelMs,
  DELAY_LEVEL_TEXT,
  DELAY_LEVELS_MS,
  MAX_DELAY_LEVEL,
  SCHEDULE_TOPIC,
} from './delay-level.js';

// JSON bodies (each is a value { encode, decode } and a type of the same name, plus its
// encodeX/decodeX functions) and the enums they carry.
export {
  encodeConsumerListBody,
  decodeConsumerListBody,
  encodeLockBatchBody,
  decodeLockBatchBody,
  encodeLockBatchResponseBody,
  decodeLockBatchResponseBody,
  encodeResetOffsetBody,
  decodeResetOffsetBody,
  encodeGetConsumerStatusBody,
  decodeGetConsumerStatusBody,
  encodeConsumeMessageDirectlyResult,
  decodeConsumeMessageDirectlyResult,
  encodeConsumerRunningInfo,
  decodeConsumerRunningInfo,
  ConsumerListBody,
  LockBatchBody,
  type LockBatchRequestBody,
  type UnlockBatchRequestBody,
  LockBatchResponseBody,
  ResetOffsetBody,
  GetConsumerStatusBody,
  ConsumeMessageDirectlyResult,
  ConsumerRunningInfo,
  ConsumerRunningInfoProp,
  encodeConsumerOffsetFile,
  decodeConsumerOffsetFile,
  type ConsumerOffsetTable,
  type ConsumerOffsetFile,
  buildSubscriptionData,
  encodeHeartbeatData,
  decodeHeartbeatData,
  type SubscriptionData,
  type ConsumerData,
  type ProducerData,
  HeartbeatData,
  compareMessageQueue,
  type MessageQueue,
  decodeTopicRouteData,
  encodeTopicRouteData,
  topicRouteSubscribeQueues,
  topicRoutePublishQueues,
  isStaticTopicRoute,
  staticTopicEndpoints,
  logicQueueBrokerName,
  isLogicQueueBroker,
  LOGIC_QUEUE_BROKER_PREFIX,
  LOGIC_QUEUE_NO_BROKER,
  STATIC_TOPIC_GLOBAL_SCOPE,
  encodeTopicQueueMappingDetail,
  decodeTopicQueueMappingDetail,
  TopicQueueMappingDetailBody,
  type TopicQueueMappingInfo,
  type TopicQueueMappingDetail,
  type LogicQueueMappingItem,
  decodeClusterInfo,
  encodeClusterInfo,
  type BrokerData,
  type QueueData,
  TopicRouteData,
  type TopicRouteEncodeOptions,
  ClusterInfo,
} from './body/index.js';
export {
  ConsumeFromWhere,
  type ConsumeFromWhereName,
  MessageModel,
  type MessageModelName,
  ConsumeType,
  type ConsumeTypeName,
  ExpressionType,
  type ExpressionTypeName,
  CMResult,
  type CMResultName,
} from './consumer-enums.js';

// fastjson-compatible JSON, for bodies the table does not cover: fastjson's non-standard forms in,
// Java's key order out.
export {
  parseFastjson,
  parseFastjsonBody,
} from './json/fastjson-parse.js';
export {
  toJavaJson,
  type JavaJsonOptions,
} from './json/java-json.js';

// SQL92 filters: Apache RocketMQ's SelectorParser and evaluator (what a broker with
// enablePropertyFilter delivers to a `subscribe(topic, { sql })` consumer).
export {
  SQL92_DEFAULT_MAX_LENGTH,
  SQL92_DEFAULT_MAX_NODES,
  SqlLimitError,
  SqlParseError,
  compileSql92,
  type EvalMeter,
  type Sql92Filter,
  type Sql92Limits,
  type Sql92Properties,
  type SqlLimitName,
} from './sql92/index.js';
