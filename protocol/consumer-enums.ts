// Enum names that travel as JSON strings in heartbeats and running info (docs/protocol-facts.md#flags-and-enums).

/** Where a consumer group with no committed offset on a queue starts: ConsumerData.consumeFromWhere. */
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
/** The name of a ConsumeFromWhere, as a heartbeat writes it. */
export type ConsumeFromWhereName = keyof typeof ConsumeFromWhere;

/**
 * How a consumer group shares a topic's messages (ConsumerData.messageModel): CLUSTERING gives
 * each message to one member, BROADCASTING to every member.
 */
export const MessageModel = {
  BROADCASTING: 'BROADCASTING',
  CLUSTERING: 'CLUSTERING',
} as const;
/** The name of a MessageModel, as a heartbeat writes it. */
export type MessageModelName = keyof typeof MessageModel;

/** What kind of consumer a group is (ConsumerData.consumeType). */
export const ConsumeType = {
  /** pull and lite-pull consumers */
  CONSUME_ACTIVELY: 'CONSUME_ACTIVELY',
  /** push consumer */
  CONSUME_PASSIVELY: 'CONSUME_PASSIVELY',
  /** 5.x pop consumer */
  CONSUME_POP: 'CONSUME_POP',
} as const;
/** The name of a ConsumeType, as a heartbeat writes it. */
export type ConsumeTypeName = keyof typeof ConsumeType;

/** The language of a subscription's filter expression (SubscriptionData.expressionType, a pull's expressionType). */
export const ExpressionType = {
  TAG: 'TAG',
  SQL92: 'SQL92',
} as const;
/** The name of an ExpressionType, as subscriptions and pull headers carry it. */
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
/** The name of a CMResult, as ConsumeMessageDirectlyResult.consumeResult carries it. */
export type CMResultName = keyof typeof CMResult;
