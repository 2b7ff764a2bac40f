/**
 * Property names (MessageConst in Apache RocketMQ) and topic-name conventions. The names are the
 * on-wire keys of the properties string (docs/protocol-facts.md#properties-string).
 */
export const MessageConst = {
  PROPERTY_KEYS: 'KEYS',
  PROPERTY_TAGS: 'TAGS',
  PROPERTY_WAIT_STORE_MSG_OK: 'WAIT',
  PROPERTY_DELAY_TIME_LEVEL: 'DELAY',
  PROPERTY_RETRY_TOPIC: 'RETRY_TOPIC',
  PROPERTY_REAL_TOPIC: 'REAL_TOPIC',
  PROPERTY_REAL_QUEUE_ID: 'REAL_QID',
  PROPERTY_TRANSACTION_PREPARED: 'TRAN_MSG',
  PROPERTY_PRODUCER_GROUP: 'PGROUP',
  PROPERTY_MIN_OFFSET: 'MIN_OFFSET',
  PROPERTY_MAX_OFFSET: 'MAX_OFFSET',
  PROPERTY_BUYER_ID: 'BUYER_ID',
  PROPERTY_ORIGIN_MESSAGE_ID: 'ORIGIN_MESSAGE_ID',
  PROPERTY_TRANSFER_FLAG: 'TRANSFER_FLAG',
  PROPERTY_CORRECTION_FLAG: 'CORRECTION_FLAG',
  PROPERTY_MQ2_FLAG: 'MQ2_FLAG',
  PROPERTY_RECONSUME_TIME: 'RECONSUME_TIME',
  PROPERTY_MSG_REGION: 'MSG_REGION',
  PROPERTY_TRACE_SWITCH: 'TRACE_ON',
  PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: 'UNIQ_KEY',
  PROPERTY_MAX_RECONSUME_TIMES: 'MAX_RECONSUME_TIMES',
  PROPERTY_CONSUME_START_TIMESTAMP: 'CONSUME_START_TIME',
  PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET: 'TRAN_PREPARED_QUEUE_OFFSET',
  PROPERTY_TRANSACTION_CHECK_TIMES: 'TRANSACTION_CHECK_TIMES',
  PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS: 'CHECK_IMMUNITY_TIME_IN_SECONDS',
  PROPERTY_INSTANCE_ID: 'INSTANCE_ID',
  PROPERTY_CORRELATION_ID: 'CORRELATION_ID',
  PROPERTY_MESSAGE_REPLY_TO_CLIENT: 'REPLY_TO_CLIENT',
  PROPERTY_MESSAGE_TTL: 'TTL',
  PROPERTY_REPLY_MESSAGE_ARRIVE_TIME: 'ARRIVE_TIME',
  PROPERTY_PUSH_REPLY_TIME: 'PUSH_REPLY_TIME',
  PROPERTY_CLUSTER: 'CLUSTER',
  PROPERTY_MESSAGE_TYPE: 'MSG_TYPE',
  PROPERTY_TRANSACTION_ID: '__transactionId__',
  PROPERTY_SHARDING_KEY: '__SHARDINGKEY',
  PROPERTY_TIMER_DELIVER_MS: 'TIMER_DELIVER_MS',
  PROPERTY_TIMER_DELAY_SEC: 'TIMER_DELAY_SEC',
  PROPERTY_TIMER_DELAY_MS: 'TIMER_DELAY_MS',
  PROPERTY_POP_CK: 'POP_CK',
  PROPERTY_CRC32: '__CRC32#',
  PROPERTY_DLQ_ORIGIN_TOPIC: 'DLQ_ORIGIN_TOPIC',
  PROPERTY_DLQ_ORIGIN_MESSAGE_ID: 'DLQ_ORIGIN_MESSAGE_ID',
  PROPERTY_INNER_NUM: 'INNER_NUM',
  PROPERTY_INNER_BASE: 'INNER_BASE',
  /** Separator of several keys inside the KEYS property. */
  KEY_SEPARATOR: ' ',
  /** Between a property's name and value. */
  NAME_VALUE_SEPARATOR: '\u0001',
  /** Between properties. */
  PROPERTY_SEPARATOR: '\u0002',
} as const;

/** Prefix of a consumer group's retry topic: `%RETRY%<group>`. */
export const RETRY_GROUP_TOPIC_PREFIX = '%RETRY%';
/** Prefix of a consumer group's dead-letter topic: `%DLQ%<group>`. */
export const DLQ_GROUP_TOPIC_PREFIX = '%DLQ%';
/** Topic whose config templates auto-created topics. */
export const AUTO_CREATE_TOPIC_KEY_TOPIC = 'TBW102';
/** Producer group of a consumer's internal producer (fallback resends). */
export const CLIENT_INNER_PRODUCER_GROUP = 'CLIENT_INNER_PRODUCER';

/** The retry topic of consumer group `group`: `%RETRY%<group>`, where its messages to consume again wait. */
export function retryTopic(group: string): string {
  return RETRY_GROUP_TOPIC_PREFIX + group;
}
/** The dead-letter topic of consumer group `group`: `%DLQ%<group>`, where messages that ran out of retries go. */
export function dlqTopic(group: string): string {
  return DLQ_GROUP_TOPIC_PREFIX + group;
}
/** Whether `topic` is a consumer group's retry topic (starts with `%RETRY%`). */
export function isRetryTopic(topic: string): boolean {
  return topic.startsWith(RETRY_GROUP_TOPIC_PREFIX);
}
