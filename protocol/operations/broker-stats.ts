import {
  QueryTopicConsumeByWhoRequestHeader,
  ViewBrokerStatsDataRequestHeader,
} from '../custom-header/broker-stats.js';
import { BrokerStatsData, GroupList } from '../body/broker-stats-bodies.js';
import { EmptyHeader, op } from '../operation.js';

/**
 * Rows of the operation table for mqadmin statsAll: a stats item of a broker and the groups that
 * consume a topic. lib/admin calls them; lib/broker's BrokerStatsProcessor serves them.
 */
export const BrokerStatsOperations = {
  /**
   * VIEW_BROKER_STATS_DATA (315): one item of the broker's BrokerStatsManager. An item the broker
   * has not counted anything for (or an unknown statsName) is SYSTEM_ERROR with the remark
   * `The stats <NAME> <KEY> not exist`, which mqadmin reads as zero.
   */
  VIEW_BROKER_STATS_DATA: op('VIEW_BROKER_STATS_DATA', {
    request: ViewBrokerStatsDataRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: BrokerStatsData,
  }),
  /** QUERY_TOPIC_CONSUME_BY_WHO (300): the groups online for the topic or holding offsets of it. */
  QUERY_TOPIC_CONSUME_BY_WHO: op('QUERY_TOPIC_CONSUME_BY_WHO', {
    request: QueryTopicConsumeByWhoRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: GroupList,
  }),
} as const;
