import { defineHeader, F, type HeaderOf } from './define.js';

/**
 * Request headers of the admin requests mqadmin sends (Java's remoting/protocol/header classes of
 * 5.3.3); the codes that reuse a header of another file (INVOKE_BROKER_TO_RESET_OFFSET takes
 * ResetOffsetRequestHeader, INVOKE_BROKER_TO_GET_CONSUMER_STATUS GetConsumerStatusRequestHeader)
 * import it from there.
 */

/** GET_TOPIC_STATS_INFO (202), `GetTopicStatsInfoRequestHeader`: topic String req. */
const topicStatsSpec = { topic: F.string.required() };
export const GetTopicStatsInfoRequestHeader = defineHeader('GetTopicStatsInfoRequestHeader', topicStatsSpec);
export type GetTopicStatsInfoRequestHeader = HeaderOf<typeof topicStatsSpec>;

/** GET_CONSUMER_CONNECTION_LIST (203), `GetConsumerConnectionListRequestHeader`: consumerGroup String req. */
const connectionSpec = { consumerGroup: F.string.required() };
export const GetConsumerConnectionListRequestHeader = defineHeader(
  'GetConsumerConnectionListRequestHeader',
  connectionSpec,
);
export type GetConsumerConnectionListRequestHeader = HeaderOf<typeof connectionSpec>;

/** DELETE_TOPIC_IN_BROKER (215), `DeleteTopicRequestHeader`: topic String req. */
const deleteTopicSpec = { topic: F.string.required() };
export const DeleteTopicRequestHeader = defineHeader('DeleteTopicRequestHeader', deleteTopicSpec);
export type DeleteTopicRequestHeader = HeaderOf<typeof deleteTopicSpec>;

/** DELETE_TOPIC_IN_NAMESRV (216), `DeleteTopicFromNamesrvRequestHeader`: topic String req | clusterName String opt (every cluster when absent). */
const deleteTopicNamesrvSpec = { topic: F.string.required(), clusterName: F.string.optional() };
export const DeleteTopicFromNamesrvRequestHeader = defineHeader(
  'DeleteTopicFromNamesrvRequestHeader',
  deleteTopicNamesrvSpec,
);
export type DeleteTopicFromNamesrvRequestHeader = HeaderOf<typeof deleteTopicNamesrvSpec>;

/** DELETE_SUBSCRIPTIONGROUP (207), `DeleteSubscriptionGroupRequestHeader`: groupName String req | cleanOffset boolean opt (default false: the offsets stay). */
const deleteGroupSpec = { groupName: F.string.required(), cleanOffset: F.boolean.optional() };
export const DeleteSubscriptionGroupRequestHeader = defineHeader(
  'DeleteSubscriptionGroupRequestHeader',
  deleteGroupSpec,
);
export type DeleteSubscriptionGroupRequestHeader = HeaderOf<typeof deleteGroupSpec>;
