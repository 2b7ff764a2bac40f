import { CreateTopicRequestHeader } from '../custom-header/admin.js';
import { TopicQueueMappingDetailBody } from '../body/topic-queue-mapping.js';
import { EmptyHeader, op } from '../operation.js';

/** Rows of the operation table for static topics (RIP-21, Apache 5.x), what mqadmin updateStaticTopic sends. */
export const StaticTopicOperations = {
  /**
   * UPDATE_AND_CREATE_STATIC_TOPIC (513): the topic config in UPDATE_AND_CREATE_TOPIC's header
   * (`force` replaces a mapping the broker would refuse as older or conflicting), the broker's new
   * TopicQueueMappingDetail as the body. The broker stores both and registers with the name server at once.
   */
  UPDATE_AND_CREATE_STATIC_TOPIC: op('UPDATE_AND_CREATE_STATIC_TOPIC', {
    request: CreateTopicRequestHeader,
    response: EmptyHeader,
    requestBody: TopicQueueMappingDetailBody,
    responseBody: 'none',
  }),
} as const;
