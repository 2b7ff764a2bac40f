import { defineHeader, F, type HeaderOf } from './define.js';

/**
 * POP consumption (5.0+). These request codes (200050…200151) do not fit the int16 code of the
 * ROCKETMQ binary header: the remoting layer sends them with JSON headers whatever the client's
 * serialize type (Java writes them truncated, and 200050 arrives as 3442).
 *
 * POP_MESSAGE (200050) request, `PopMessageRequestHeader` (B/PopMessageProcessor):
 *
 * | key | type | req | meaning |
 * | consumerGroup | String | yes | group |
 * | topic | String | yes | topic |
 * | queueId | int | yes | queue; negative: every readable queue, starting at a random one |
 * | maxMsgNums | int | yes | batch size, at most 32 |
 * | invisibleTime | long | yes | ms the popped messages stay invisible |
 * | pollTime | long | yes | long-poll ms; 0 = answer at once |
 * | bornTime | long | yes | client time (ms); the broker answers 210 when now − bornTime − pollTime > 500 |
 * | initMode | int | yes | 0 MIN / 1 MAX, for a group without an offset |
 * | expType, exp | String | no | filter, default TAG `*` |
 * | order | Boolean | no | order pop (reviveQid 999) |
 * | attemptId | String | no | retry id of an order pop |
 * | bname | String | no | broker name |
 */
const popRequestSpec = {
  consumerGroup: F.string.required(),
  topic: F.string.required(),
  queueId: F.int.required(),
  maxMsgNums: F.int.required(),
  invisibleTime: F.long.required(),
  pollTime: F.long.required(),
  bornTime: F.long.required(),
  initMode: F.int.required(),
  expType: F.string.optional(),
  exp: F.string.optional(),
  order: F.boolean.optional(),
  attemptId: F.string.optional(),
  bname: F.string.optional(),
};
export const PopMessageRequestHeader = defineHeader('PopMessageRequestHeader', popRequestSpec);
export type PopMessageRequestHeader = HeaderOf<typeof popRequestSpec>;

/**
 * POP_MESSAGE response, `PopMessageResponseHeader`, sent with SUCCESS, POLLING_FULL (209) and
 * POLLING_TIMEOUT (210) alike:
 *
 * | key | type | meaning |
 * | popTime | long | broker time of the pop |
 * | invisibleTime | long | echoed |
 * | reviveQid | int | revive queue of the checkpoint, 0–7; 999 for an order pop |
 * | restNum | long | backlog left |
 * | startOffsetInfo | String | `r qid start;…` (pop-extra-info.ts) |
 * | msgOffsetInfo | String | `r qid o1,o2;…` |
 * | orderCountInfo | String | `r qo{qid}%{offset} count;…;r qid minCount`, order pops |
 */
const popResponseSpec = {
  popTime: F.long.required(),
  invisibleTime: F.long.required(),
  reviveQid: F.int.required(),
  restNum: F.long.required(),
  startOffsetInfo: F.string.optional(),
  msgOffsetInfo: F.string.optional(),
  orderCountInfo: F.string.optional(),
};
export const PopMessageResponseHeader = defineHeader('PopMessageResponseHeader', popResponseSpec);
export type PopMessageResponseHeader = HeaderOf<typeof popResponseSpec>;

/**
 * ACK_MESSAGE (200051) request, `AckMessageRequestHeader` (B/AckMessageProcessor): all required.
 *
 * | key | type | meaning |
 * | consumerGroup | String | group |
 * | topic | String | the real topic: `%RETRY%{group}_{topic}` when the receipt's r is 1 |
 * | queueId | Integer | receipt field 7 |
 * | extraInfo | String | the whole receipt handle (POP_CK) |
 * | offset | Long | receipt field 8, the message's queue offset |
 */
const ackRequestSpec = {
  consumerGroup: F.string.required(),
  topic: F.string.required(),
  queueId: F.int.required(),
  extraInfo: F.string.required(),
  offset: F.long.required(),
  bname: F.string.optional(),
};
export const AckMessageRequestHeader = defineHeader('AckMessageRequestHeader', ackRequestSpec);
export type AckMessageRequestHeader = HeaderOf<typeof ackRequestSpec>;

/**
 * CHANGE_MESSAGE_INVISIBLETIME (200053) request, `ChangeInvisibleTimeRequestHeader`: the ACK
 * fields plus invisibleTime (Long, ms from now). All required.
 */
const changeInvisibleSpec = {
  consumerGroup: F.string.required(),
  topic: F.string.required(),
  queueId: F.int.required(),
  extraInfo: F.string.required(),
  offset: F.long.required(),
  invisibleTime: F.long.required(),
  bname: F.string.optional(),
};
export const ChangeInvisibleTimeRequestHeader = defineHeader('ChangeInvisibleTimeRequestHeader', changeInvisibleSpec);
export type ChangeInvisibleTimeRequestHeader = HeaderOf<typeof changeInvisibleSpec>;

/** CHANGE_MESSAGE_INVISIBLETIME response, `ChangeInvisibleTimeResponseHeader`: popTime, invisibleTime (long), reviveQid (int). */
const changeInvisibleResponseSpec = {
  popTime: F.long.required(),
  invisibleTime: F.long.required(),
  reviveQid: F.int.required(),
};
export const ChangeInvisibleTimeResponseHeader = defineHeader(
  'ChangeInvisibleTimeResponseHeader',
  changeInvisibleResponseSpec,
);
export type ChangeInvisibleTimeResponseHeader = HeaderOf<typeof changeInvisibleResponseSpec>;
