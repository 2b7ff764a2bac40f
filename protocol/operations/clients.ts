import {
  ConsumeMessageDirectlyResultRequestHeader,
  GetConsumerListByGroupRequestHeader,
  GetConsumerRunningInfoRequestHeader,
  GetConsumerStatusRequestHeader,
  HeartbeatRequestHeader,
  HeartbeatResponseHeader,
  LockBatchMqRequestHeader,
  NotifyConsumerIdsChangedRequestHeader,
  ResetOffsetRequestHeader,
  UnlockBatchMqRequestHeader,
  UnregisterClientRequestHeader,
} from '../custom-header/client-management.js';
import { CheckTransactionStateRequestHeader, EndTransactionRequestHeader } from '../custom-header/admin.js';
import { ReplyMessageRequestHeader } from '../custom-header/reply-message.js';
import { HeartbeatData } from '../body/heartbeat-data.js';
import {
  ConsumeMessageDirectlyResult,
  ConsumerListBody,
  ConsumerRunningInfo,
  GetConsumerStatusBody,
  LockBatchBody,
  LockBatchResponseBody,
  ResetOffsetBody,
} from '../body/consumer-bodies.js';
import { CheckClientRequestHeader } from '../custom-header/broker-admin.js';
import { CheckClientRequestBody } from '../body/broker-admin-bodies.js';
import { EmptyHeader, op } from '../operation.js';

/** Rows of the operation table: client management, queue locks, and the requests a broker sends to its clients. */
export const ClientOperations = {
  // ---- client management and locks
  HEART_BEAT: op('HEART_BEAT', {
    request: HeartbeatRequestHeader,
    response: HeartbeatResponseHeader,
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
    responseBody: GetConsumerStatusBody,
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
} as const;
