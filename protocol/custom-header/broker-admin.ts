import { defineHeader, F, type HeaderOf } from './define.js';

const consumeStatsSpec = { consumerGroup: F.string.required(), topic: F.string.optional(), bname: F.string.optional() };
/** GET_CONSUME_STATS (208), `GetConsumeStatsRequestHeader`: consumerGroup String req | topic String opt (all of the group's topics when absent). */
export const GetConsumeStatsRequestHeader = defineHeader('GetConsumeStatsRequestHeader', consumeStatsSpec);
export type GetConsumeStatsRequestHeader = HeaderOf<typeof consumeStatsSpec>;

const topicConfigSpec = { topic: F.string.required(), lo: F.boolean.optional() };
/** GET_TOPIC_CONFIG (351, 5.x), `GetTopicConfigRequestHeader`: topic String req | lo Boolean opt (logic queue mapping). */
export const GetTopicConfigRequestHeader = defineHeader('GetTopicConfigRequestHeader', topicConfigSpec);
export type GetTopicConfigRequestHeader = HeaderOf<typeof topicConfigSpec>;

/** CHECK_CLIENT_CONFIG (46): no header fields; everything travels in the CheckClientRequestBody. */
export const CheckClientRequestHeader = defineHeader('CheckClientRequestHeader', {});
