/** Enum names that travel as JSON strings in heartbeats and running info (fact sheet §6.3). */

export const ConsumeFromWhere = {
  CONSUME_FROM_LAST_OFFSET: 'CONSUME_FROM_LAST_OFFSET',
  CONSUME_FROM_FIRST_OFFSET: 'CONSUME_FROM_FIRST_OFFSET',
  CONSUME_FROM_TIMESTAMP: 'CONSUME_FROM_TIMESTAMP',
  /** Deprecated; the Java client treats it like CONSUME_FROM_LAST_OFFSET. */
  CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST: 'CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST',
  /** Deprecated; the Java client treats it like CONSUME_FROM_LAST_OFFSET. */
  CONSUME_FROM_MIN_OFFSET: 'CONSUME_FROM_MIN_OFFSET',
  /** Deprecated; the Java client treats it like CONSUME_FROM_LAST_OFFSET. */
  CONSUME_FROM_MAX_OFFSET: 'CONSUME_FROM_MAX_OFFSET',
} as const;
export type ConsumeFromWhereName = keyof typeof ConsumeFromWhere;

export const MessageModel = {
  BROADCASTING: 'BROADCASTING',
  CLUSTERING: 'CLUSTERING',
} as const;
export type MessageModelName = keyof typeof MessageModel;

export const ConsumeType = {
  /** pull and lite-pull consumers */
  CONSUME_ACTIVELY: 'CONSUME_ACTIVELY',
  /** push consumer */
  CONSUME_PASSIVELY: 'CONSUME_PASSIVELY',
  /** 5.x pop consumer */
  CONSUME_POP: 'CONSUME_POP',
} as const;
export type ConsumeTypeName = keyof typeof ConsumeType;

export const ExpressionType = {
  TAG: 'TAG',
  SQL92: 'SQL92',
} as const;
export type ExpressionTypeName = keyof typeof ExpressionType;

/** CONSUME_MESSAGE_DIRECTLY result names (ConsumeMessageDirectlyResult.consumeResult). */
export const CMResult = {
  CR_SUCCESS: 'CR_SUCCESS',
  CR_LATER: 'CR_LATER',
  CR_ROLLBACK: 'CR_ROLLBACK',
  CR_COMMIT: 'CR_COMMIT',
  CR_THROW_EXCEPTION: 'CR_THROW_EXCEPTION',
  CR_RETURN_NULL: 'CR_RETURN_NULL',
} as const;
export type CMResultName = keyof typeof CMResult;
