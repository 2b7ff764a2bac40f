import { defineHeader, F, rekey, type HeaderOf } from './define.js';

const v1Spec = {
  producerGroup: F.string.required(),
  topic: F.string.required(),
  defaultTopic: F.string.required(),
  defaultTopicQueueNums: F.int.required(),
  queueId: F.int.required(),
  sysFlag: F.int.required(),
  bornTimestamp: F.long.required(),
  flag: F.int.required(),
  properties: F.string.optional(),
  reconsumeTimes: F.int.optional(),
  unitMode: F.boolean.optional(),
  maxReconsumeTimes: F.int.optional(),
  batch: F.boolean.optional(),
  bname: F.string.optional(),
};
/**
 * SEND_MESSAGE (10) `SendMessageRequestHeader` and SEND_MESSAGE_V2 (310) / SEND_BATCH_MESSAGE
 * (320) `SendMessageRequestHeaderV2`
 * (docs/protocol-facts.md#send). Both carry the same fields; V2 under one-letter keys.
 *
 * | V2 | V1 key | type | req | meaning |
 * | a | producerGroup | String | yes | |
 * | b | topic | String | yes | |
 * | c | defaultTopic | String | yes | "TBW102" |
 * | d | defaultTopicQueueNums | Integer | yes | 4 |
 * | e | queueId | Integer | yes | negative = broker picks |
 * | f | sysFlag | Integer | yes | MessageSysFlag bits |
 * | g | bornTimestamp | Long | yes | client clock ms |
 * | h | flag | Integer | yes | user flag |
 * | i | properties | String | no | properties string |
 * | j | reconsumeTimes | Integer | no | |
 * | k | unitMode | boolean | no | "false" |
 * | l | maxReconsumeTimes | Integer | no | retry topics only |
 * | m | batch | boolean | no | true for 320 |
 * | n | bname (V1) / n (V2) | String | no | broker name (4.9.5+) |
 */
export const SendMessageRequestHeader = defineHeader('SendMessageRequestHeader', v1Spec);
export type SendMessageRequestHeader = HeaderOf<typeof v1Spec>;

/** V1 field name → V2 key. */
export const SEND_HEADER_V2_KEYS = {
  producerGroup: 'a',
  topic: 'b',
  defaultTopic: 'c',
  defaultTopicQueueNums: 'd',
  queueId: 'e',
  sysFlag: 'f',
  bornTimestamp: 'g',
  flag: 'h',
  properties: 'i',
  reconsumeTimes: 'j',
  unitMode: 'k',
  maxReconsumeTimes: 'l',
  batch: 'm',
  bname: 'n',
} as const satisfies Record<keyof typeof v1Spec, string>;

// The same fields under the one-letter keys of SEND_HEADER_V2_KEYS (the table above is the one copy).
const v2Spec = rekey(v1Spec, SEND_HEADER_V2_KEYS);
/** Same fields as SendMessageRequestHeader, encoded under keys a..n. */
export const SendMessageRequestHeaderV2 = defineHeader('SendMessageRequestHeaderV2', v2Spec);
export type SendMessageRequestHeaderV2 = SendMessageRequestHeader;

/** Rename V1 extFields keys to V2 ones (unknown keys are kept as they are). */
export function sendHeaderV1ToV2(ext: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  const map = SEND_HEADER_V2_KEYS as Record<string, string>;
  for (const k in ext) out[map[k] ?? k] = ext[k]!;
  return out;
}
const V2_TO_V1: Record<string, string> = {};
for (const [k, v] of Object.entries(SEND_HEADER_V2_KEYS)) V2_TO_V1[v] = k;
/** Rename V2 extFields keys (a..n) to V1 ones (unknown keys are kept as they are). */
export function sendHeaderV2ToV1(ext: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in ext) out[V2_TO_V1[k] ?? k] = ext[k]!;
  return out;
}

const sendResponseSpec = {
  msgId: F.string.required(),
  queueId: F.int.required(),
  queueOffset: F.long.required(),
  transactionId: F.string.optional(),
  batchUniqId: F.string.optional(),
  recallHandle: F.string.optional(),
  MSG_REGION: F.string.optional(),
  TRACE_ON: F.string.optional(),
};
/**
 * Send response, `SendMessageResponseHeader`, plus the two extFields every broker adds and the
 * Java client reads unconditionally: MSG_REGION ("DefaultRegion") and TRACE_ON ("true"/"false").
 *
 * | msgId | String | offset msgId (comma-joined for a batch) |
 * | queueId | Integer | queue written |
 * | queueOffset | Long | logical offset of the (first) message |
 * | transactionId | String | transactional messages |
 * | batchUniqId, recallHandle | String | 5.x |
 */
export const SendMessageResponseHeader = defineHeader('SendMessageResponseHeader', sendResponseSpec);
export type SendMessageResponseHeader = HeaderOf<typeof sendResponseSpec>;

const sendTraceFieldsSpec = { MSG_REGION: F.string.required(), TRACE_ON: F.string.required() };
/**
 * The two extFields a broker adds to every send answer, failures included (Java's
 * SendMessageProcessor: `response.addExtField(MessageConst.PROPERTY_MSG_REGION, …)` and
 * PROPERTY_TRACE_SWITCH), written after the answer's own header fields.
 */
export const SendResponseTraceFields = defineHeader('SendResponseTraceFields', sendTraceFieldsSpec);
export type SendResponseTraceFields = HeaderOf<typeof sendTraceFieldsSpec>;

const sendBackSpec = {
  offset: F.long.required(),
  group: F.string.required(),
  delayLevel: F.int.required(),
  originMsgId: F.string.optional(),
  originTopic: F.string.optional(),
  unitMode: F.boolean.optional(),
  maxReconsumeTimes: F.int.optional(),
  bname: F.string.optional(),
};
/**
 * CONSUMER_SEND_MSG_BACK (36), `ConsumerSendMsgBackRequestHeader` (docs/protocol-facts.md#send-back):
 * offset Long req (commit-log offset) | group String req | delayLevel Integer req |
 * originMsgId, originTopic String opt | unitMode boolean (always sent, "false") |
 * maxReconsumeTimes Integer opt | bname opt.
 */
export const ConsumerSendMsgBackRequestHeader = defineHeader('ConsumerSendMsgBackRequestHeader', sendBackSpec);
export type ConsumerSendMsgBackRequestHeader = HeaderOf<typeof sendBackSpec>;
