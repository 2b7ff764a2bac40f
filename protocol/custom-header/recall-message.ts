import { defineHeader, F, type HeaderOf } from './define.js';

const recallSpec = {
  producerGroup: F.string.optional(),
  topic: F.string.required(),
  recallHandle: F.string.required(),
  bname: F.string.optional(),
};
/**
 * RECALL_MESSAGE (370, 5.x) `RecallMessageRequestHeader` (a TopicRequestHeader, so `bname` too):
 * a producer withdraws a timer message before it is delivered (DefaultMQProducer#recallMessage,
 * the broker's RecallMessageProcessor).
 *
 * | key | type | req | meaning |
 * | producerGroup | String | no | the recalling producer's group (stored on the delete marker) |
 * | topic | String | yes | the message's topic; must be the handle's |
 * | recallHandle | String | yes | the send result's recallHandle (protocol/recall-handle.ts) |
 * | bname | String | no | the handle's broker name (Java sets it; the broker reads its own config) |
 */
export const RecallMessageRequestHeader = defineHeader('RecallMessageRequestHeader', recallSpec);
export type RecallMessageRequestHeader = HeaderOf<typeof recallSpec>;

const recallResponseSpec = { msgId: F.string.required(), MSG_REGION: F.string.optional() };
/**
 * RECALL_MESSAGE's answer `RecallMessageResponseHeader`: `msgId`, the recalled message's UNIQ_KEY
 * (as the handle names it). The broker adds MSG_REGION to the answer's fields, as to a send's.
 */
export const RecallMessageResponseHeader = defineHeader('RecallMessageResponseHeader', recallResponseSpec);
export type RecallMessageResponseHeader = HeaderOf<typeof recallResponseSpec>;
