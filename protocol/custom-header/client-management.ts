import { defineHeader, F, type HeaderOf } from './define.js';

/** GET_ROUTEINFO_BY_TOPIC (105) to the name server: topic req, acceptStandardJsonOnly Boolean opt. */
const routeSpec = { topic: F.string.required(), acceptStandardJsonOnly: F.boolean.optional() };
export const GetRouteInfoRequestHeader = defineHeader('GetRouteInfoRequestHeader', routeSpec);
export type GetRouteInfoRequestHeader = HeaderOf<typeof routeSpec>;

/** GET_CONSUMER_LIST_BY_GROUP (38): consumerGroup req. The response header has no fields. */
const groupSpec = { consumerGroup: F.string.required() };
export const GetConsumerListByGroupRequestHeader = defineHeader('GetConsumerListByGroupRequestHeader', groupSpec);
export type GetConsumerListByGroupRequestHeader = HeaderOf<typeof groupSpec>;

/** NOTIFY_CONSUMER_IDS_CHANGED (40), broker → client, oneway: consumerGroup req. */
export const NotifyConsumerIdsChangedRequestHeader = defineHeader('NotifyConsumerIdsChangedRequestHeader', groupSpec);
export type NotifyConsumerIdsChangedRequestHeader = HeaderOf<typeof groupSpec>;

/** UNREGISTER_CLIENT (35): clientID req, producerGroup opt, consumerGroup opt. */
const unregisterSpec = {
  clientID: F.string.required(),
  producerGroup: F.string.optional(),
  consumerGroup: F.string.optional(),
};
export const UnregisterClientRequestHeader = defineHeader('UnregisterClientRequestHeader', unregisterSpec);
export type UnregisterClientRequestHeader = HeaderOf<typeof unregisterSpec>;

/**
 * HEART_BEAT (34), LOCK_BATCH_MQ (41), UNLOCK_BATCH_MQ (42): no fields (5.x sends an empty
 * header with only the optional base keys). The bodies carry everything.
 */
export const HeartbeatRequestHeader = defineHeader('HeartbeatRequestHeader', {});
export const LockBatchMqRequestHeader = defineHeader('LockBatchMqRequestHeader', {});
export const UnlockBatchMqRequestHeader = defineHeader('UnlockBatchMqRequestHeader', {});

/**
 * RESET_CONSUMER_CLIENT_OFFSET (220), broker → client, `ResetOffsetRequestHeader` (§5.11):
 * topic, group String req | timestamp Long req | isForce boolean req (the key really is
 * "isForce") | 5.x queueId Integer (default -1), offset Long. Body: ResetOffsetBody.
 */
const resetSpec = {
  topic: F.string.required(),
  group: F.string.required(),
  timestamp: F.long.required(),
  isForce: F.boolean.required(),
  queueId: F.int.optional(),
  offset: F.long.optional(),
};
export const ResetOffsetRequestHeader = defineHeader('ResetOffsetRequestHeader', resetSpec);
export type ResetOffsetRequestHeader = HeaderOf<typeof resetSpec>;

/** GET_CONSUMER_STATUS_FROM_CLIENT (221), broker → client: topic, group req, clientAddr opt. */
const statusSpec = { topic: F.string.required(), group: F.string.required(), clientAddr: F.string.optional() };
export const GetConsumerStatusRequestHeader = defineHeader('GetConsumerStatusRequestHeader', statusSpec);
export type GetConsumerStatusRequestHeader = HeaderOf<typeof statusSpec>;

/** GET_CONSUMER_RUNNING_INFO (307), broker → client: consumerGroup, clientId req, jstackEnable boolean opt. */
const runningSpec = {
  consumerGroup: F.string.required(),
  clientId: F.string.required(),
  jstackEnable: F.boolean.optional(),
};
export const GetConsumerRunningInfoRequestHeader = defineHeader('GetConsumerRunningInfoRequestHeader', runningSpec);
export type GetConsumerRunningInfoRequestHeader = HeaderOf<typeof runningSpec>;

/**
 * CONSUME_MESSAGE_DIRECTLY (309), broker → client, `ConsumeMessageDirectlyResultRequestHeader`:
 * consumerGroup req | clientId, msgId, brokerName opt | 5.x topic, topicSysFlag, groupSysFlag.
 * Body: one stored message.
 */
const directSpec = {
  consumerGroup: F.string.required(),
  clientId: F.string.optional(),
  msgId: F.string.optional(),
  brokerName: F.string.optional(),
  topic: F.string.optional(),
  topicSysFlag: F.int.optional(),
  groupSysFlag: F.int.optional(),
};
export const ConsumeMessageDirectlyResultRequestHeader = defineHeader('ConsumeMessageDirectlyResultRequestHeader', directSpec);
export type ConsumeMessageDirectlyResultRequestHeader = HeaderOf<typeof directSpec>;
