import { ResponseCode } from '../codes.js';
import { GetRouteInfoRequestHeader, ResetOffsetRequestHeader } from '../custom-header/client-management.js';
import {
  CreateTopicRequestHeader,
  QueryMessageRequestHeader,
  QueryMessageResponseHeader,
  RegisterBrokerRequestHeader,
  RegisterBrokerResponseHeader,
  ViewMessageRequestHeader,
} from '../custom-header/admin.js';
import { ClusterInfo, TopicRouteData } from '../body/topic-route-data.js';
import { ResetOffsetBody } from '../body/consumer-bodies.js';
import { GetConsumeStatsRequestHeader, GetTopicConfigRequestHeader } from '../custom-header/broker-admin.js';
import { ConsumeStats, TopicConfigBody, TopicList } from '../body/broker-admin-bodies.js';
import {
  DeleteSubscriptionGroupRequestHeader,
  DeleteTopicFromNamesrvRequestHeader,
  DeleteTopicRequestHeader,
  GetConsumerConnectionListRequestHeader,
  GetTopicStatsInfoRequestHeader,
} from '../custom-header/admin-tools.js';
import {
  ConsumerConnection,
  KVTable,
  SubscriptionGroupConfig,
  SubscriptionGroupWrapper,
  TopicStatsTable,
} from '../body/admin-tools-bodies.js';
import { EmptyHeader, op } from '../operation.js';

/** Rows of the operation table: name server, topics, messages and the admin tools (what mqadmin sends). */
export const AdminOperations = {
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
    // no message with the key on this broker: Java's QueryMessageProcessor answers it, the admin
    // tools move on to the next broker
    answers: [ResponseCode.QUERY_NOT_FOUND],
  }),
  // ---- admin tools: what mqadmin sends; lib/admin calls them, lib/broker's AdminToolsProcessor serves them
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
