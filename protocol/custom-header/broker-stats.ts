import { defineHeader, F, type HeaderOf } from './define.js';

/**
 * Headers of what mqadmin statsAll sends (Java's remoting/protocol/header classes of 5.3.3): a
 * stats item of the broker's BrokerStatsManager, and the groups that consume a topic.
 */

/**
 * VIEW_BROKER_STATS_DATA (315), `ViewBrokerStatsDataRequestHeader`: statsName String req (a
 * BrokerStatsManager set: `TOPIC_PUT_NUMS`, `GROUP_GET_NUMS`, …) | statsKey String req (`topic` for
 * TOPIC_PUT_NUMS, `topic@group` for GROUP_GET_NUMS).
 */
const viewStatsSpec = { statsName: F.string.required(), statsKey: F.string.required() };
export const ViewBrokerStatsDataRequestHeader = defineHeader('ViewBrokerStatsDataRequestHeader', viewStatsSpec);
export type ViewBrokerStatsDataRequestHeader = HeaderOf<typeof viewStatsSpec>;

/** QUERY_TOPIC_CONSUME_BY_WHO (300), `QueryTopicConsumeByWhoRequestHeader`: topic String req. */
const consumeByWhoSpec = { topic: F.string.required() };
export const QueryTopicConsumeByWhoRequestHeader = defineHeader(
  'QueryTopicConsumeByWhoRequestHeader',
  consumeByWhoSpec,
);
export type QueryTopicConsumeByWhoRequestHeader = HeaderOf<typeof consumeByWhoSpec>;
