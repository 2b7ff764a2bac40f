import { ResponseCode } from '../codes.js';
import {
  ConsumerSendMsgBackRequestHeader,
  SendMessageRequestHeader,
  SendMessageRequestHeaderV2,
  SendMessageResponseHeader,
} from '../custom-header/send-message.js';
import { PullMessageRequestHeader, PullMessageResponseHeader } from '../custom-header/pull-message.js';
import {
  QueryConsumerOffsetRequestHeader,
  QueryConsumerOffsetResponseHeader,
  UpdateConsumerOffsetRequestHeader,
  UpdateConsumerOffsetResponseHeader,
} from '../custom-header/consumer-offset.js';
import {
  GetEarliestMsgStoretimeRequestHeader,
  GetEarliestMsgStoretimeResponseHeader,
  GetMaxOffsetRequestHeader,
  GetMaxOffsetResponseHeader,
  GetMinOffsetRequestHeader,
  GetMinOffsetResponseHeader,
  SearchOffsetRequestHeader,
  SearchOffsetResponseHeader,
} from '../custom-header/queue-offset.js';
import {
  AckMessageRequestHeader,
  ChangeInvisibleTimeRequestHeader,
  ChangeInvisibleTimeResponseHeader,
  PopMessageRequestHeader,
  PopMessageResponseHeader,
} from '../custom-header/pop.js';
import {
  BatchAckMessageRequestBody,
  QueryAssignmentRequestBody,
  QueryAssignmentResponseBody,
  SetMessageRequestModeRequestBody,
} from '../body/pop-bodies.js';
import { RecallMessageRequestHeader, RecallMessageResponseHeader } from '../custom-header/recall-message.js';
import { EmptyHeader, op } from '../operation.js';

const SEND_ANSWERS = [
  ResponseCode.FLUSH_DISK_TIMEOUT,
  ResponseCode.FLUSH_SLAVE_TIMEOUT,
  ResponseCode.SLAVE_NOT_AVAILABLE,
] as const;
const PULL_ANSWERS = [
  ResponseCode.PULL_NOT_FOUND,
  ResponseCode.PULL_RETRY_IMMEDIATELY,
  ResponseCode.PULL_OFFSET_MOVED,
] as const;

/** Rows of the operation table: send, pull, POP and consumer offsets: what producers and consumers send on the data path. */
export const MessagingOperations = {
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
  RECALL_MESSAGE: op('RECALL_MESSAGE', {
    request: RecallMessageRequestHeader,
    response: RecallMessageResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
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
} as const;
