/**
 * Request and response codes of the remoting protocol (RequestCode, RemotingSysResponseCode and
 * ResponseCode in Apache RocketMQ). Numbers are the same in 4.9 and 5.x unless noted.
 */
export const RequestCode = {
  SEND_MESSAGE: 10,
  PULL_MESSAGE: 11,
  QUERY_MESSAGE: 12,
  QUERY_BROKER_OFFSET: 13,
  QUERY_CONSUMER_OFFSET: 14,
  UPDATE_CONSUMER_OFFSET: 15,
  UPDATE_AND_CREATE_TOPIC: 17,
  UPDATE_AND_CREATE_TOPIC_LIST: 18,
  GET_ALL_TOPIC_CONFIG: 21,
  UPDATE_BROKER_CONFIG: 25,
  GET_BROKER_CONFIG: 26,
  GET_BROKER_RUNTIME_INFO: 28,
  SEARCH_OFFSET_BY_TIMESTAMP: 29,
  GET_MAX_OFFSET: 30,
  GET_MIN_OFFSET: 31,
  GET_EARLIEST_MSG_STORETIME: 32,
  VIEW_MESSAGE_BY_ID: 33,
  HEART_BEAT: 34,
  UNREGISTER_CLIENT: 35,
  CONSUMER_SEND_MSG_BACK: 36,
  END_TRANSACTION: 37,
  GET_CONSUMER_LIST_BY_GROUP: 38,
  CHECK_TRANSACTION_STATE: 39,
  NOTIFY_CONSUMER_IDS_CHANGED: 40,
  LOCK_BATCH_MQ: 41,
  UNLOCK_BATCH_MQ: 42,
  GET_ALL_CONSUMER_OFFSET: 43,
  GET_ALL_DELAY_OFFSET: 45,
  CHECK_CLIENT_CONFIG: 46,
  GET_CLIENT_CONFIG: 47,
  PUT_KV_CONFIG: 100,
  GET_KV_CONFIG: 101,
  DELETE_KV_CONFIG: 102,
  REGISTER_BROKER: 103,
  UNREGISTER_BROKER: 104,
  GET_ROUTEINFO_BY_TOPIC: 105,
  GET_BROKER_CLUSTER_INFO: 106,
  UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: 200,
  GET_ALL_SUBSCRIPTIONGROUP_CONFIG: 201,
  GET_TOPIC_STATS_INFO: 202,
  GET_CONSUMER_CONNECTION_LIST: 203,
  GET_PRODUCER_CONNECTION_LIST: 204,
  WIPE_WRITE_PERM_OF_BROKER: 205,
  GET_ALL_TOPIC_LIST_FROM_NAMESERVER: 206,
  DELETE_SUBSCRIPTIONGROUP: 207,
  GET_CONSUME_STATS: 208,
  RESET_CONSUMER_OFFSET_IN_CONSUMER: 211,
  RESET_CONSUMER_OFFSET_IN_BROKER: 212,
  DELETE_TOPIC_IN_BROKER: 215,
  DELETE_TOPIC_IN_NAMESRV: 216,
  REGISTER_TOPIC_IN_NAMESRV: 217,
  GET_KVLIST_BY_NAMESPACE: 219,
  RESET_CONSUMER_CLIENT_OFFSET: 220,
  GET_CONSUMER_STATUS_FROM_CLIENT: 221,
  INVOKE_BROKER_TO_RESET_OFFSET: 222,
  INVOKE_BROKER_TO_GET_CONSUMER_STATUS: 223,
  GET_TOPICS_BY_CLUSTER: 224,
  QUERY_TOPIC_CONSUME_BY_WHO: 300,
  QUERY_CONSUME_TIME_SPAN: 303,
  GET_CONSUMER_RUNNING_INFO: 307,
  QUERY_CORRECTION_OFFSET: 308,
  CONSUME_MESSAGE_DIRECTLY: 309,
  SEND_MESSAGE_V2: 310,
  CLONE_GROUP_OFFSET: 314,
  VIEW_BROKER_STATS_DATA: 315,
  GET_BROKER_CONSUME_STATS: 317,
  SEND_BATCH_MESSAGE: 320,
  QUERY_CONSUME_QUEUE: 321,
  QUERY_DATA_VERSION: 322,
  RESUME_CHECK_HALF_MESSAGE: 323,
  SEND_REPLY_MESSAGE: 324,
  SEND_REPLY_MESSAGE_V2: 325,
  PUSH_REPLY_MESSAGE_TO_CLIENT: 326,
  ADD_WRITE_PERM_OF_BROKER: 327,
  GET_ALL_PRODUCER_INFO: 328,
  DELETE_EXPIRED_COMMITLOG: 329,
  GET_TOPIC_CONFIG: 351,
  GET_SUBSCRIPTIONGROUP_CONFIG: 352,
  LITE_PULL_MESSAGE: 361,
  RECALL_MESSAGE: 370,
  QUERY_ASSIGNMENT: 400,
  SET_MESSAGE_REQUEST_MODE: 401,
  GET_ALL_MESSAGE_REQUEST_MODE: 402,
  UPDATE_AND_CREATE_STATIC_TOPIC: 513,
  POP_MESSAGE: 200050,
  ACK_MESSAGE: 200051,
  PEEK_MESSAGE: 200052,
  CHANGE_MESSAGE_INVISIBLETIME: 200053,
  NOTIFICATION: 200054,
  POLLING_INFO: 200055,
  POP_ROLLBACK: 200056,
  BATCH_ACK_MESSAGE: 200151,
} as const;
/** The name of a request code RequestCode knows, e.g. `'PULL_MESSAGE'`. */
export type RequestCodeName = keyof typeof RequestCode;
/** A request code RequestCode knows, as the number a request frame's `code` carries. */
export type RequestCodeValue = (typeof RequestCode)[RequestCodeName];

/**
 * The `code` of a response frame: RemotingSysResponseCode's 0–4, ResponseCode's own codes, and the
 * negative RPC_* codes 5.x uses internally. Where 4.9 and 5.x give a number different names, the
 * member is named after 5.x.
 */
export const ResponseCode = {
  SUCCESS: 0,
  SYSTEM_ERROR: 1,
  SYSTEM_BUSY: 2,
  REQUEST_CODE_NOT_SUPPORTED: 3,
  TRANSACTION_FAILED: 4,
  FLUSH_DISK_TIMEOUT: 10,
  SLAVE_NOT_AVAILABLE: 11,
  FLUSH_SLAVE_TIMEOUT: 12,
  MESSAGE_ILLEGAL: 13,
  SERVICE_NOT_AVAILABLE: 14,
  VERSION_NOT_SUPPORTED: 15,
  NO_PERMISSION: 16,
  TOPIC_NOT_EXIST: 17,
  TOPIC_EXIST_ALREADY: 18,
  PULL_NOT_FOUND: 19,
  PULL_RETRY_IMMEDIATELY: 20,
  PULL_OFFSET_MOVED: 21,
  QUERY_NOT_FOUND: 22,
  SUBSCRIPTION_PARSE_FAILED: 23,
  SUBSCRIPTION_NOT_EXIST: 24,
  SUBSCRIPTION_NOT_LATEST: 25,
  SUBSCRIPTION_GROUP_NOT_EXIST: 26,
  FILTER_DATA_NOT_EXIST: 27,
  FILTER_DATA_NOT_LATEST: 28,
  INVALID_PARAMETER: 29,
  TRANSACTION_SHOULD_COMMIT: 200,
  TRANSACTION_SHOULD_ROLLBACK: 201,
  TRANSACTION_STATE_UNKNOW: 202,
  TRANSACTION_STATE_GROUP_WRONG: 203,
  NO_BUYER_ID: 204,
  NOT_IN_CURRENT_UNIT: 205,
  CONSUMER_NOT_ONLINE: 206,
  CONSUME_MSG_TIMEOUT: 207,
  NO_MESSAGE: 208,
  /** 4.9: UPDATE_AND_CREATE_ACL_CONFIG_FAILED; 5.x: POLLING_FULL. */
  POLLING_FULL: 209,
  /** 4.9: DELETE_ACL_CONFIG_FAILED; 5.x: POLLING_TIMEOUT. */
  POLLING_TIMEOUT: 210,
  /** 4.9: UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED; 5.x: BROKER_NOT_EXIST. */
  BROKER_NOT_EXIST: 211,
  BROKER_DISPATCH_NOT_COMPLETE: 212,
  BROADCAST_CONSUMPTION: 213,
  FLOW_CONTROL: 215,
  NOT_LEADER_FOR_QUEUE: 501,
  ILLEGAL_OPERATION: 604,
  GO_AWAY: 1500,
  RPC_UNKNOWN: -1000,
  RPC_ADDR_IS_NULL: -1002,
  RPC_SEND_TO_CHANNEL_FAILED: -1004,
  RPC_TIME_OUT: -1006,
} as const;
/** The name of a response code ResponseCode knows, e.g. `'PULL_NOT_FOUND'`. */
export type ResponseCodeName = keyof typeof ResponseCode;

function invert(table: Record<string, number>): Map<number, string> {
  const m = new Map<number, string>();
  for (const [k, v] of Object.entries(table)) if (!m.has(v)) m.set(v, k);
  return m;
}
const requestNames = invert(RequestCode);
const responseNames = invert(ResponseCode);

/** Display name of a request code, e.g. `PULL_MESSAGE`; `UNKNOWN_<n>` when not known. */
export function requestCodeName(code: number): string {
  return requestNames.get(code) ?? `UNKNOWN_${code}`;
}
/** Display name of a response code, e.g. `PULL_NOT_FOUND`; `UNKNOWN_<n>` when not known. */
export function responseCodeName(code: number): string {
  return responseNames.get(code) ?? `UNKNOWN_${code}`;
}

/** LanguageCode: the JSON header carries the name, the ROCKETMQ header the byte. */
export const LanguageCode = {
  JAVA: 0,
  CPP: 1,
  DOTNET: 2,
  PYTHON: 3,
  DELPHI: 4,
  ERLANG: 5,
  RUBY: 6,
  OTHER: 7,
  HTTP: 8,
  GO: 9,
  PHP: 10,
  OMS: 11,
  RUST: 12,
  /** Known to brokers 5.3.2 and later only. */
  NODE_JS: 13,
} as const;
/** The name of a LanguageCode, as a JSON header's `language` carries it (`'JAVA'`). */
export type LanguageName = keyof typeof LanguageCode;
const languageNames = invert(LanguageCode);
export function languageName(code: number): string | null {
  return languageNames.get(code) ?? null;
}
export function languageByte(name: string | null | undefined): number {
  if (name == null) return LanguageCode.OTHER;
  const v = (LanguageCode as Record<string, number>)[name];
  return v ?? LanguageCode.OTHER;
}

/** Bits of the frame header's `flag`. */
export const RemotingFlag = {
  /** bit 0: the frame is a response. */
  RESPONSE: 1,
  /** bit 1: a request that expects no response. */
  ONEWAY: 2,
} as const;

/**
 * How a frame's header is serialized, the high byte of its header-length word: 0 for a JSON
 * header, 1 for the binary ROCKETMQ header.
 */
export const SerializeType = { JSON: 0, ROCKETMQ: 1 } as const;
/** `'JSON'` or `'ROCKETMQ'`, as RemotingCommand.serializeType names the header's encoding. */
export type SerializeTypeName = keyof typeof SerializeType;

/**
 * MQVersion ordinals that change behaviour on the other side. 409 (V4_9_8) is what rocketwire sends
 * by default: >= 401 makes name servers answer standard JSON, and <= 475 keeps a 5.3.2+ server from
 * answering GO_AWAY while it shuts down.
 */
export const MQVersion = {
  V3_4_9: 121,
  V4_1_0_SNAPSHOT: 232,
  V4_9_4: 401,
  V4_9_8: 409,
  V5_3_1: 475,
  V5_3_3: 479,
} as const;
