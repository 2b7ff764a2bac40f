import { defineHeader, F, type HeaderOf } from './define.js';

const pullRequestSpec = {
  consumerGroup: F.string.required(),
  topic: F.string.required(),
  queueId: F.int.required(),
  queueOffset: F.long.required(),
  maxMsgNums: F.int.required(),
  sysFlag: F.int.required(),
  commitOffset: F.long.required(),
  suspendTimeoutMillis: F.long.required(),
  subscription: F.string.optional(),
  subVersion: F.long.required(),
  expressionType: F.string.optional(),
  maxMsgBytes: F.int.optional(),
  requestSource: F.int.optional(),
  proxyFrowardClientId: F.string.optional(),
  bname: F.string.optional(),
};
/**
 * PULL_MESSAGE (11) / LITE_PULL_MESSAGE (361) request, `PullMessageRequestHeader` (docs/protocol-facts.md#pull).
 *
 * | key | type | req | meaning |
 * | consumerGroup | String | yes | group |
 * | topic | String | yes | topic or %RETRY%group |
 * | queueId | Integer | yes | queue |
 * | queueOffset | Long | yes | logical offset to read from |
 * | maxMsgNums | Integer | yes | batch size (32) |
 * | sysFlag | Integer | yes | PullSysFlag bits (2 or 3 from the push consumer) |
 * | commitOffset | Long | yes | consumer's in-memory offset, -1 when none |
 * | suspendTimeoutMillis | Long | yes | long-poll hold (15000) |
 * | subscription | String | no | expression, only with FLAG_SUBSCRIPTION |
 * | subVersion | Long | yes | subscription version (ms) |
 * | expressionType | String | no | TAG / SQL92 |
 * | maxMsgBytes | Integer | no | 5.x, ignored by brokers |
 * | requestSource, proxyFrowardClientId | | no | 5.x proxy |
 * | bname | String | no | broker name (4.9.5+) |
 */
export const PullMessageRequestHeader = defineHeader('PullMessageRequestHeader', pullRequestSpec);
export type PullMessageRequestHeader = HeaderOf<typeof pullRequestSpec>;

const pullResponseSpec = {
  suggestWhichBrokerId: F.long.required(),
  nextBeginOffset: F.long.required(),
  minOffset: F.long.required(),
  maxOffset: F.long.required(),
  offsetDelta: F.long.optional(),
  topicSysFlag: F.int.optional(),
  groupSysFlag: F.int.optional(),
  forbiddenType: F.int.optional(),
};
/**
 * PULL_MESSAGE response, `PullMessageResponseHeader`. remark = store status name (FOUND, …).
 *
 * | key | type | meaning |
 * | suggestWhichBrokerId | Long | broker id to pull from next (0 = master) |
 * | nextBeginOffset | Long | offset for the next pull |
 * | minOffset | Long | smallest logical offset in the queue |
 * | maxOffset | Long | last offset + 1 |
 * | offsetDelta | Long | 5.x static topics |
 * | topicSysFlag, groupSysFlag | Integer | 5.x, always sent by 5.x |
 * | forbiddenType | Integer | 5.x, with NO_PERMISSION |
 */
export const PullMessageResponseHeader = defineHeader('PullMessageResponseHeader', pullResponseSpec);
export type PullMessageResponseHeader = HeaderOf<typeof pullResponseSpec>;

/** Store statuses a broker puts in a pull response's remark. */
export const GetMessageStatus = {
  FOUND: 'FOUND',
  NO_MATCHED_MESSAGE: 'NO_MATCHED_MESSAGE',
  MESSAGE_WAS_REMOVING: 'MESSAGE_WAS_REMOVING',
  OFFSET_FOUND_NULL: 'OFFSET_FOUND_NULL',
  OFFSET_OVERFLOW_BADLY: 'OFFSET_OVERFLOW_BADLY',
  OFFSET_OVERFLOW_ONE: 'OFFSET_OVERFLOW_ONE',
  OFFSET_TOO_SMALL: 'OFFSET_TOO_SMALL',
  NO_MATCHED_LOGIC_QUEUE: 'NO_MATCHED_LOGIC_QUEUE',
  NO_MESSAGE_IN_QUEUE: 'NO_MESSAGE_IN_QUEUE',
  /** 5.x */
  OFFSET_RESET: 'OFFSET_RESET',
} as const;
