import { defineHeader, F, type HeaderOf } from './define.js';

const querySpec = {
  consumerGroup: F.string.required(),
  topic: F.string.required(),
  queueId: F.int.required(),
  setZeroIfNotFound: F.boolean.optional(),
  bname: F.string.optional(),
};
/**
 * QUERY_CONSUMER_OFFSET (14), `QueryConsumerOffsetRequestHeader` (docs/protocol-facts.md#consumer-offsets):
 * consumerGroup String req | topic String req | queueId Integer req |
 * setZeroIfNotFound Boolean opt (5.x) | bname String opt.
 */
export const QueryConsumerOffsetRequestHeader = defineHeader('QueryConsumerOffsetRequestHeader', querySpec);
export type QueryConsumerOffsetRequestHeader = HeaderOf<typeof querySpec>;

const queryResponseSpec = { offset: F.long.required() };
/** QUERY_CONSUMER_OFFSET response on SUCCESS: offset Long (QUERY_NOT_FOUND has no header). */
export const QueryConsumerOffsetResponseHeader = defineHeader('QueryConsumerOffsetResponseHeader', queryResponseSpec);
export type QueryConsumerOffsetResponseHeader = HeaderOf<typeof queryResponseSpec>;

const updateSpec = {
  consumerGroup: F.string.required(),
  topic: F.string.required(),
  queueId: F.int.required(),
  commitOffset: F.long.required(),
  bname: F.string.optional(),
};
/**
 * UPDATE_CONSUMER_OFFSET (15), `UpdateConsumerOffsetRequestHeader`: consumerGroup, topic,
 * queueId (Integer), commitOffset (Long), all required; bname opt. Sent oneway by push consumers.
 */
export const UpdateConsumerOffsetRequestHeader = defineHeader('UpdateConsumerOffsetRequestHeader', updateSpec);
export type UpdateConsumerOffsetRequestHeader = HeaderOf<typeof updateSpec>;

/** UPDATE_CONSUMER_OFFSET response: no fields. */
export const UpdateConsumerOffsetResponseHeader = defineHeader('UpdateConsumerOffsetResponseHeader', {});
export type UpdateConsumerOffsetResponseHeader = Record<string, never>;
