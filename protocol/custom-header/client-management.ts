import { defineHeader, F, type HeaderOf } from './define.js';

const routeSpec = { topic: F.string.required(), acceptStandardJsonOnly: F.boolean.optional() };
/** GET_ROUTEINFO_BY_TOPIC (105) to the name server: topic req, acceptStandardJsonOnly Boolean opt. */
export const GetRouteInfoRequestHeader = defineHeader('GetRouteInfoRequestHeader', routeSpec);
export type GetRouteInfoRequestHeader = HeaderOf<typeof routeSpec>;

const groupSpec = { consumerGroup: F.string.required() };
/** GET_CONSUMER_LIST_BY_GROUP (38): consumerGroup req. The response header has no fields. */
export const GetConsumerListByGroupRequestHeader = defineHeader('GetConsumerListByGroupRequestHeader', groupSpec);
export type GetConsumerListByGroupRequestHeader = HeaderOf<typeof groupSpec>;

/** NOTIFY_CONSUMER_IDS_CHANGED (40), broker → client, oneway: consumerGroup req. */
export const NotifyConsumerIdsChangedRequestHeader = defineHeader('NotifyConsumerIdsChangedRequestHeader', groupSpec);
export type NotifyConsumerIdsChangedRequestHeader = HeaderOf<typeof groupSpec>;

const unregisterSpec = {
  clientID: F.string.required(),
  producerGroup: F.string.optional(),
  consumerGroup: F.string.optional(),
};
/** UNREGISTER_CLIENT (35): clientID req, producerGroup opt, consumerGroup opt. */
export const UnregisterClientRequestHeader = defineHeader('UnregisterClientRequestHeader', unregisterSpec);
export type UnregisterClientRequestHeader = HeaderOf<typeof unregisterSpec>;

/**
 * HEART_BEAT (34): no fields (5.x sends an empty header with only the optional base keys, as it
 * does for LOCK_BATCH_MQ and UNLOCK_BATCH_MQ below); the HeartbeatData body carries everything.
 */
export const HeartbeatRequestHeader = defineHeader('HeartbeatRequestHeader', {});
const heartbeatResponseSpec = {
  isSupportHeartBeatV2: F.boolean.optional('IS_SUPPORT_HEART_BEAT_V2'),
  isSubChange: F.boolean.optional('IS_SUB_CHANGE'),
};
/**
 * HEART_BEAT (34) response of a 5.x broker: Java's ClientManageProcessor#heartBeat adds the
 * extFields MixAll.IS_SUPPORT_HEART_BEAT_V2 and MixAll.IS_SUB_CHANGE ("true"/"false"), which a 5.x
 * client's sendHeartbeatToBrokerV2 reads; a 4.9 broker answers with no fields.
 *
 * | key | type | meaning |
 * | IS_SUPPORT_HEART_BEAT_V2 | Boolean | the broker takes heartbeats that omit unchanged subscriptions |
 * | IS_SUB_CHANGE | Boolean | the subscriptions this heartbeat carried changed the group |
 */
export const HeartbeatResponseHeader = defineHeader('HeartbeatResponseHeader', heartbeatResponseSpec);
export type HeartbeatResponseHeader = HeaderOf<typeof heartbeatResponseSpec>;
/** LOCK_BATCH_MQ (41): no header fields; the queues to lock travel in a LockBatchBody. */
export const LockBatchMqRequestHeader = defineHeader('LockBatchMqRequestHeader', {});
/** UNLOCK_BATCH_MQ (42): no header fields; the queues to unlock travel in an UnlockBatchRequestBody. */
export const UnlockBatchMqRequestHeader = defineHeader('UnlockBatchMqRequestHeader', {});

const resetSpec = {
  topic: F.string.required(),
  group: F.string.required(),
  timestamp: F.long.required(),
  isForce: F.boolean.required(),
  queueId: F.int.optional(),
  offset: F.long.optional(),
};
/**
 * RESET_CONSUMER_CLIENT_OFFSET (220), broker → client, `ResetOffsetRequestHeader`
 * (docs/protocol-facts.md#broker-initiated-requests):
 * topic, group String req | timestamp Long req | isForce boolean req (the key really is
 * "isForce") | 5.x queueId Integer (default -1), offset Long. Body: ResetOffsetBody.
 */
export const ResetOffsetRequestHeader = defineHeader('ResetOffsetRequestHeader', resetSpec);
export type ResetOffsetRequestHeader = HeaderOf<typeof resetSpec>;

const statusSpec = { topic: F.string.required(), group: F.string.required(), clientAddr: F.string.optional() };
/** GET_CONSUMER_STATUS_FROM_CLIENT (221), broker → client: topic, group req, clientAddr opt. */
export const GetConsumerStatusRequestHeader = defineHeader('GetConsumerStatusRequestHeader', statusSpec);
export type GetConsumerStatusRequestHeader = HeaderOf<typeof statusSpec>;

const runningSpec = {
  consumerGroup: F.string.required(),
  clientId: F.string.required(),
  jstackEnable: F.boolean.optional(),
};
/** GET_CONSUMER_RUNNING_INFO (307), broker → client: consumerGroup, clientId req, jstackEnable boolean opt. */
export const GetConsumerRunningInfoRequestHeader = defineHeader('GetConsumerRunningInfoRequestHeader', runningSpec);
export type GetConsumerRunningInfoRequestHeader = HeaderOf<typeof runningSpec>;

const directSpec = {
  consumerGroup: F.string.required(),
  clientId: F.string.optional(),
  msgId: F.string.optional(),
  brokerName: F.string.optional(),
  topic: F.string.optional(),
  topicSysFlag: F.int.optional(),
  groupSysFlag: F.int.optional(),
};
/**
 * CONSUME_MESSAGE_DIRECTLY (309), broker → client, `ConsumeMessageDirectlyResultRequestHeader`:
 * consumerGroup req | clientId, msgId, brokerName opt | 5.x topic, topicSysFlag, groupSysFlag.
 * Body: one stored message.
 */
export const ConsumeMessageDirectlyResultRequestHeader = defineHeader(
  'ConsumeMessageDirectlyResultRequestHeader',
  directSpec,
);
export type ConsumeMessageDirectlyResultRequestHeader = HeaderOf<typeof directSpec>;

const namespaceV2Spec = { nsd: F.boolean.required(), ns: F.string.required() };
/**
 * The fields Java's NamespaceRpcHook#doBeforeRequest adds to every request of a client with a
 * namespaceV2 (RpcRequestHeader's `nsd`, MixAll.RPC_REQUEST_HEADER_NAMESPACED_FIELD, and `ns`,
 * _NAMESPACE_FIELD), after the request's own fields; the open-source broker never reads them.
 */
export const NamespaceV2Fields = defineHeader('NamespaceV2Fields', namespaceV2Spec);
export type NamespaceV2Fields = HeaderOf<typeof namespaceV2Spec>;
