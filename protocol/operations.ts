import { RequestCode, ResponseCode } from './codes.js';
import { defineHeader, type HeaderCodec } from './custom-header/define.js';
import {
  ConsumerSendMsgBackRequestHeader,
  SendMessageRequestHeader,
  SendMessageRequestHeaderV2,
  SendMessageResponseHeader,
} from './custom-header/send-message.js';
import { PullMessageRequestHeader, PullMessageResponseHeader } from './custom-header/pull-message.js';
import {
  QueryConsumerOffsetRequestHeader,
  QueryConsumerOffsetResponseHeader,
  UpdateConsumerOffsetRequestHeader,
  UpdateConsumerOffsetResponseHeader,
} from './custom-header/consumer-offset.js';
import {
  GetEarliestMsgStoretimeRequestHeader,
  GetEarliestMsgStoretimeResponseHeader,
  GetMaxOffsetRequestHeader,
  GetMaxOffsetResponseHeader,
  GetMinOffsetRequestHeader,
  GetMinOffsetResponseHeader,
  SearchOffsetRequestHeader,
  SearchOffsetResponseHeader,
} from './custom-header/queue-offset.js';
import {
  ConsumeMessageDirectlyResultRequestHeader,
  GetConsumerListByGroupRequestHeader,
  GetConsumerRunningInfoRequestHeader,
  GetConsumerStatusRequestHeader,
  GetRouteInfoRequestHeader,
  HeartbeatRequestHeader,
  LockBatchMqRequestHeader,
  NotifyConsumerIdsChangedRequestHeader,
  ResetOffsetRequestHeader,
  UnlockBatchMqRequestHeader,
  UnregisterClientRequestHeader,
} from './custom-header/client-management.js';
import {
  CheckTransactionStateRequestHeader,
  CreateTopicRequestHeader,
  EndTransactionRequestHeader,
  QueryMessageRequestHeader,
  QueryMessageResponseHeader,
  RegisterBrokerRequestHeader,
  RegisterBrokerResponseHeader,
  ViewMessageRequestHeader,
} from './custom-header/admin.js';
import { ReplyMessageRequestHeader } from './custom-header/reply-message.js';
import { HeartbeatData } from './body/heartbeat-data.js';
import { ClusterInfo, TopicRouteData } from './body/topic-route-data.js';
import {
  ConsumeMessageDirectlyResult,
  ConsumerListBody,
  ConsumerRunningInfo,
  LockBatchBody,
  LockBatchResponseBody,
  ResetOffsetBody,
} from './body/consumer-bodies.js';
import {
  AckMessageRequestHeader,
  ChangeInvisibleTimeRequestHeader,
  ChangeInvisibleTimeResponseHeader,
  PopMessageRequestHeader,
  PopMessageResponseHeader,
} from './custom-header/pop.js';
import {
  BatchAckMessageRequestBody,
  QueryAssignmentRequestBody,
  QueryAssignmentResponseBody,
  SetMessageRequestModeRequestBody,
} from './body/pop-bodies.js';
import {
  CheckClientRequestHeader,
  GetConsumeStatsRequestHeader,
  GetTopicConfigRequestHeader,
} from './custom-header/broker-admin.js';
import { CheckClientRequestBody, ConsumeStats, TopicConfigBody, TopicList } from './body/broker-admin-bodies.js';
// admin tools (rocketwire admin)
import {
  DeleteSubscriptionGroupRequestHeader,
  DeleteTopicFromNamesrvRequestHeader,
  DeleteTopicRequestHeader,
  GetConsumerConnectionListRequestHeader,
  GetTopicStatsInfoRequestHeader,
} from './custom-header/admin-tools.js';
import {
  ConsumerConnection,
  KVTable,
  SubscriptionGroupConfig,
  SubscriptionGroupWrapper,
  TopicStatsTable,
} from './body/admin-tools-bodies.js';

/**
 * The operation table: for every request code rocketwire sends or serves, the codec of its
 * request header, of its response header and of both bodies. The client's RPCs
 * (lib/client) and the embedded broker's processors (lib/broker) are both built from these rows,
 * so each wire fact lives here once. A new request code is one row here plus the code that uses it.
 */

/** A JSON (or binary) body codec of protocol/body. */
export interface BodyCodec<T> {
  encode(value: T): Buffer;
  decode(body: Buffer | Uint8Array): T;
}

/**
 * What travels in a body: a codec, `'raw'` bytes handed through as they are (stored messages, a
 * batch, a message body), or `'none'` (no body; one that arrives anyway is ignored, as Java does).
 */
export type BodySpec<T> = BodyCodec<T> | 'raw' | 'none';

type BodyValue<B> = B extends BodyCodec<infer T> ? T : B extends 'raw' ? Buffer : undefined;

/**
 * One row of the operation table: a request code, the header codecs of its request and response,
 * what its two bodies hold, and the response codes other than SUCCESS that are answers.
 */
export interface Operation<
  Req = unknown,
  Res = unknown,
  ReqBody extends BodySpec<unknown> = BodySpec<unknown>,
  ResBody extends BodySpec<unknown> = BodySpec<unknown>,
> {
  /** The request code. */
  readonly code: number;
  /** RequestCode name, for errors and logs. */
  readonly name: string;
  readonly request: HeaderCodec<Req>;
  readonly response: HeaderCodec<Res>;
  readonly requestBody: ReqBody;
  readonly responseBody: ResBody;
  /** Response codes other than SUCCESS that are answers rather than failures (PULL_NOT_FOUND…). */
  readonly answers: readonly number[];
}

/** Request header fields of an operation. */
export type OperationRequest<O> =
  O extends Operation<infer Req, unknown, BodySpec<unknown>, BodySpec<unknown>> ? Req : never;
/** Response header fields of an operation. */
export type OperationResponse<O> =
  O extends Operation<unknown, infer Res, BodySpec<unknown>, BodySpec<unknown>> ? Res : never;
/** Decoded request body of an operation (Buffer for raw, undefined for none). */
export type OperationRequestBody<O> =
  O extends Operation<unknown, unknown, infer B, BodySpec<unknown>> ? BodyValue<B> : never;
/** Decoded response body of an operation (Buffer for raw, undefined for none). */
export type OperationResponseBody<O> =
  O extends Operation<unknown, unknown, BodySpec<unknown>, infer B> ? BodyValue<B> : never;

/** The header of requests and responses that carry no fields. */
export const EmptyHeader = defineHeader('EmptyHeader', {});

function op<Req, Res, ReqBody extends BodySpec<unknown>, ResBody extends BodySpec<unknown>>(
  name: keyof typeof RequestCode,
  row: {
    request: HeaderCodec<Req>;
    response: HeaderCodec<Res>;
    requestBody: ReqBody;
    responseBody: ResBody;
    answers?: readonly number[];
  },
): Operation<Req, Res, ReqBody, ResBody> {
  return Object.freeze({
    code: RequestCode[name],
    name,
    request: row.request,
    response: row.response,
    requestBody: row.requestBody,
    responseBody: row.responseBody,
    answers: Object.freeze([...(row.answers ?? [])]),
  });
}

const SEND_ANSWERS = [
  ResponseCode.FLUSH_DISK_TIMEOUT,
  ResponseCode.FLUSH_SLAVE_TIMEOUT,
  ResponseCode.SLAVE_NOT_AVAILABLE,
];
const PULL_ANSWERS = [ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_RETRY_IMMEDIATELY, ResponseCode.PULL_OFFSET_MOVED];

/** Every operation, by RequestCode name. */
export const Operations = {
  // ---- send
  // Stored, but not flushed or replicated in time: a send result, not a failure (Java's
  // MQClientAPIImpl.processSendResponse reads the header for these as for SUCCESS).
  SEND_MESSAGE: op('SEND_MESSAGE', {
    request: SendMessageRequestHeader,
    response: SendMessageResponseHeader,
    requestBody: 'raw',
    responseBody: 'none',
    answers: SEND_ANSWERS,
  }),
  SEND_MESSAGE_V2: op('SEND_MESSAGE_V2', {
    request: SendMessageRequestHeaderV2,
    response: SendMessageResponseHeader,
    requestBody: 'raw',
    responseBody: 'none',
    answers: SEND_ANSWERS,
  }),
  // Request-reply: the replying consumer sends these with the send headers (V1 and V2 keys).
  SEND_REPLY_MESSAGE: op('SEND_REPLY_MESSAGE', {
    request: SendMessageRequestHeader,
    response: SendMessageResponseHeader,
    requestBody: 'raw',
    responseBody: 'none',
    answers: SEND_ANSWERS,
  }),
  SEND_REPLY_MESSAGE_V2: op('SEND_REPLY_MESSAGE_V2', {
    request: SendMessageRequestHeaderV2,
    response: SendMessageResponseHeader,
    requestBody: 'raw',
    responseBody: 'none',
    answers: SEND_ANSWERS,
  }),
  SEND_BATCH_MESSAGE: op('SEND_BATCH_MESSAGE', {
    request: SendMessageRequestHeaderV2,
    response: SendMessageResponseHeader,
    requestBody: 'raw',
    responseBody: 'none',
    answers: SEND_ANSWERS,
  }),
  CONSUMER_SEND_MSG_BACK: op('CONSUMER_SEND_MSG_BACK', {
    request: ConsumerSendMsgBackRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  // ---- pull
  PULL_MESSAGE: op('PULL_MESSAGE', {
    request: PullMessageRequestHeader,
    response: PullMessageResponseHeader,
    requestBody: 'none',
    responseBody: 'raw',
    answers: PULL_ANSWERS,
  }),
  LITE_PULL_MESSAGE: op('LITE_PULL_MESSAGE', {
    request: PullMessageRequestHeader,
    response: PullMessageResponseHeader,
    requestBody: 'none',
    responseBody: 'raw',
    answers: PULL_ANSWERS,
  }),
  // ---- pop (5.x): codes above 32767, so always sent with JSON headers (remoting/connection.ts).
  // POLLING_FULL, POLLING_TIMEOUT and PULL_NOT_FOUND carry the response header and no messages
  // (C/MQClientAPIImpl#processPopResponse); an ACK other than SUCCESS is Java's AckStatus.NO_EXIST.
  POP_MESSAGE: op('POP_MESSAGE', {
    request: PopMessageRequestHeader,
    response: PopMessageResponseHeader,
    requestBody: 'none',
    responseBody: 'raw',
    answers: [ResponseCode.POLLING_FULL, ResponseCode.POLLING_TIMEOUT, ResponseCode.PULL_NOT_FOUND],
  }),
  ACK_MESSAGE: op('ACK_MESSAGE', {
    request: AckMessageRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
    answers: [ResponseCode.NO_MESSAGE],
  }),
  BATCH_ACK_MESSAGE: op('BATCH_ACK_MESSAGE', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: BatchAckMessageRequestBody,
    responseBody: 'none',
    answers: [ResponseCode.NO_MESSAGE],
  }),
  CHANGE_MESSAGE_INVISIBLETIME: op('CHANGE_MESSAGE_INVISIBLETIME', {
    request: ChangeInvisibleTimeRequestHeader,
    response: ChangeInvisibleTimeResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
    answers: [ResponseCode.NO_MESSAGE],
  }),
  // 5.x server-side assignment: the broker says PULL or POP per topic@group (clientRebalance=false)
  QUERY_ASSIGNMENT: op('QUERY_ASSIGNMENT', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: QueryAssignmentRequestBody,
    responseBody: QueryAssignmentResponseBody,
  }),
  SET_MESSAGE_REQUEST_MODE: op('SET_MESSAGE_REQUEST_MODE', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: SetMessageRequestModeRequestBody,
    responseBody: 'none',
  }),
  // ---- offsets
  QUERY_CONSUMER_OFFSET: op('QUERY_CONSUMER_OFFSET', {
    request: QueryConsumerOffsetRequestHeader,
    response: QueryConsumerOffsetResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
    answers: [ResponseCode.QUERY_NOT_FOUND],
  }),
  // Oneway: Java's RemoteBrokerOffsetStore.persistAll sends it with isOneway = true (the shutdown
  // flush and admin tools send the same request as a normal call).
  UPDATE_CONSUMER_OFFSET: op('UPDATE_CONSUMER_OFFSET', {
    request: UpdateConsumerOffsetRequestHeader,
    response: UpdateConsumerOffsetResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  GET_MAX_OFFSET: op('GET_MAX_OFFSET', {
    request: GetMaxOffsetRequestHeader,
    response: GetMaxOffsetResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  GET_MIN_OFFSET: op('GET_MIN_OFFSET', {
    request: GetMinOffsetRequestHeader,
    response: GetMinOffsetResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  SEARCH_OFFSET_BY_TIMESTAMP: op('SEARCH_OFFSET_BY_TIMESTAMP', {
    request: SearchOffsetRequestHeader,
    response: SearchOffsetResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  GET_EARLIEST_MSG_STORETIME: op('GET_EARLIEST_MSG_STORETIME', {
    request: GetEarliestMsgStoretimeRequestHeader,
    response: GetEarliestMsgStoretimeResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  // ---- client management and locks
  HEART_BEAT: op('HEART_BEAT', {
    request: HeartbeatRequestHeader,
    response: EmptyHeader,
    requestBody: HeartbeatData,
    responseBody: 'none',
  }),
  UNREGISTER_CLIENT: op('UNREGISTER_CLIENT', {
    request: UnregisterClientRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  GET_CONSUMER_LIST_BY_GROUP: op('GET_CONSUMER_LIST_BY_GROUP', {
    request: GetConsumerListByGroupRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: ConsumerListBody,
  }),
  LOCK_BATCH_MQ: op('LOCK_BATCH_MQ', {
    request: LockBatchMqRequestHeader,
    response: EmptyHeader,
    requestBody: LockBatchBody,
    responseBody: LockBatchResponseBody,
  }),
  CHECK_CLIENT_CONFIG: op('CHECK_CLIENT_CONFIG', {
    request: CheckClientRequestHeader,
    response: EmptyHeader,
    requestBody: CheckClientRequestBody,
    responseBody: 'none',
  }),
  UNLOCK_BATCH_MQ: op('UNLOCK_BATCH_MQ', {
    request: UnlockBatchMqRequestHeader,
    response: EmptyHeader,
    requestBody: LockBatchBody,
    responseBody: 'none',
  }),
  // ---- broker → client
  NOTIFY_CONSUMER_IDS_CHANGED: op('NOTIFY_CONSUMER_IDS_CHANGED', {
    request: NotifyConsumerIdsChangedRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  RESET_CONSUMER_CLIENT_OFFSET: op('RESET_CONSUMER_CLIENT_OFFSET', {
    request: ResetOffsetRequestHeader,
    response: EmptyHeader,
    requestBody: ResetOffsetBody,
    responseBody: 'none',
  }),
  GET_CONSUMER_STATUS_FROM_CLIENT: op('GET_CONSUMER_STATUS_FROM_CLIENT', {
    request: GetConsumerStatusRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'raw',
  }),
  GET_CONSUMER_RUNNING_INFO: op('GET_CONSUMER_RUNNING_INFO', {
    request: GetConsumerRunningInfoRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: ConsumerRunningInfo,
  }),
  CONSUME_MESSAGE_DIRECTLY: op('CONSUME_MESSAGE_DIRECTLY', {
    request: ConsumeMessageDirectlyResultRequestHeader,
    response: EmptyHeader,
    requestBody: 'raw',
    responseBody: ConsumeMessageDirectlyResult,
  }),
  // The broker pushes a reply to the requester; the body is the reply's body.
  PUSH_REPLY_MESSAGE_TO_CLIENT: op('PUSH_REPLY_MESSAGE_TO_CLIENT', {
    request: ReplyMessageRequestHeader,
    response: EmptyHeader,
    requestBody: 'raw',
    responseBody: 'none',
  }),
  CHECK_TRANSACTION_STATE: op('CHECK_TRANSACTION_STATE', {
    request: CheckTransactionStateRequestHeader,
    response: EmptyHeader,
    requestBody: 'raw',
    responseBody: 'none',
  }),
  END_TRANSACTION: op('END_TRANSACTION', {
    request: EndTransactionRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  // ---- name server
  GET_ROUTEINFO_BY_TOPIC: op('GET_ROUTEINFO_BY_TOPIC', {
    request: GetRouteInfoRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: TopicRouteData,
  }),
  REGISTER_BROKER: op('REGISTER_BROKER', {
    request: RegisterBrokerRequestHeader,
    response: RegisterBrokerResponseHeader,
    requestBody: 'raw',
    responseBody: 'raw',
  }),
  GET_ALL_TOPIC_LIST_FROM_NAMESERVER: op('GET_ALL_TOPIC_LIST_FROM_NAMESERVER', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: TopicList,
  }),
  GET_BROKER_CLUSTER_INFO: op('GET_BROKER_CLUSTER_INFO', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: ClusterInfo,
  }),
  // ---- topics, messages and admin
  UPDATE_AND_CREATE_TOPIC: op('UPDATE_AND_CREATE_TOPIC', {
    request: CreateTopicRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  VIEW_MESSAGE_BY_ID: op('VIEW_MESSAGE_BY_ID', {
    request: ViewMessageRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'raw',
  }),
  GET_TOPIC_CONFIG: op('GET_TOPIC_CONFIG', {
    request: GetTopicConfigRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: TopicConfigBody,
  }),
  GET_CONSUME_STATS: op('GET_CONSUME_STATS', {
    request: GetConsumeStatsRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: ConsumeStats,
  }),
  QUERY_MESSAGE: op('QUERY_MESSAGE', {
    request: QueryMessageRequestHeader,
    response: QueryMessageResponseHeader,
    requestBody: 'none',
    responseBody: 'raw',
  }),
  // ---- admin tools (what mqadmin sends; lib/admin calls them, lib/broker's AdminToolsProcessor serves them)
  GET_BROKER_RUNTIME_INFO: op('GET_BROKER_RUNTIME_INFO', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: KVTable,
  }),
  GET_TOPIC_STATS_INFO: op('GET_TOPIC_STATS_INFO', {
    request: GetTopicStatsInfoRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: TopicStatsTable,
  }),
  GET_CONSUMER_CONNECTION_LIST: op('GET_CONSUMER_CONNECTION_LIST', {
    request: GetConsumerConnectionListRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: ConsumerConnection,
  }),
  DELETE_TOPIC_IN_BROKER: op('DELETE_TOPIC_IN_BROKER', {
    request: DeleteTopicRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  DELETE_TOPIC_IN_NAMESRV: op('DELETE_TOPIC_IN_NAMESRV', {
    request: DeleteTopicFromNamesrvRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: op('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: SubscriptionGroupConfig,
    responseBody: 'none',
  }),
  GET_ALL_SUBSCRIPTIONGROUP_CONFIG: op('GET_ALL_SUBSCRIPTIONGROUP_CONFIG', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: SubscriptionGroupWrapper,
  }),
  DELETE_SUBSCRIPTIONGROUP: op('DELETE_SUBSCRIPTIONGROUP', {
    request: DeleteSubscriptionGroupRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  INVOKE_BROKER_TO_RESET_OFFSET: op('INVOKE_BROKER_TO_RESET_OFFSET', {
    request: ResetOffsetRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: ResetOffsetBody,
  }),
} as const;

/** The name of a row of Operations: the RequestCode name of its request code. */
export type OperationName = keyof typeof Operations;

const BY_CODE: ReadonlyMap<number, Operation> = new Map(
  Object.values(Operations).map((o) => [o.code, o as unknown as Operation] as const),
);

/** The operation of a request code, or undefined for a code not in the table. */
export function operationOf(code: number): Operation | undefined {
  return BY_CODE.get(code);
}

/**
 * Decode a send request header by request code, with the codec of the code's row: V2 (one-letter
 * keys) for SEND_MESSAGE_V2, SEND_BATCH_MESSAGE and SEND_REPLY_MESSAGE_V2, V1 for any other code.
 */
export function decodeSendMessageRequestHeader(
  code: number,
  ext: Readonly<Record<string, string>> | null | undefined,
): SendMessageRequestHeader {
  return (
    operationOf(code)?.request === SendMessageRequestHeaderV2 ? SendMessageRequestHeaderV2 : SendMessageRequestHeader
  ).decode(ext);
}
