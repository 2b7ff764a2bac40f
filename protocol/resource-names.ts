import { DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX } from './message-const.js';

/**
 * Topic and group name rules, shared by the broker (which must refuse a name before it reaches a
 * file name: topics name consume-queue folders, groups name their `%RETRY%` / `%DLQ%` topics and
 * the keys of consumerOffset.json) and the client (which refuses the same names up front, as Java's
 * Validators do). Rules and remarks are Apache RocketMQ develop's (5.3.4-SNAPSHOT):
 * common/.../topic/TopicValidator.java and client/.../Validators.java.
 *
 * * Characters `[%|a-zA-Z0-9_-]` only, not blank. Every allowed character is ASCII, so a valid
 *   name's length in characters is its length in UTF-8 bytes, and no valid name contains `/`, `\`,
 *   `.`, `@`, `,` or `:`.
 * * Topics: at most 127 characters; `%RETRY%…` and `%DLQ%…` topics at most 255.
 * * Groups: at most 120 characters (develop's Validators.GROUP_MAX_LENGTH; 4.9.8 and 5.3.3 allowed
 *   255). develop chose 120 so that `%RETRY%<group>_<topic>` (POP retry) stays within 255; it also
 *   keeps `%RETRY%<group>` a valid topic and one file-name component.
 */

export const TOPIC_MAX_LENGTH = 127;
export const RETRY_OR_DLQ_TOPIC_MAX_LENGTH = 255;
export const GROUP_MAX_LENGTH = 120;

/** TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC … RMQ_SYS_ROCKSDB_OFFSET_TOPIC: SYSTEM_TOPIC_SET. */
export const SYSTEM_TOPICS: ReadonlySet<string> = new Set([
  'TBW102',
  'SCHEDULE_TOPIC_XXXX',
  'BenchmarkTest',
  'RMQ_SYS_TRANS_HALF_TOPIC',
  'RMQ_SYS_TRACE_TOPIC',
  'RMQ_SYS_TRANS_OP_HALF_TOPIC',
  'TRANS_CHECK_MAX_TIME_TOPIC',
  'SELF_TEST_TOPIC',
  'OFFSET_MOVED_EVENT',
  'CHECKPOINT_TOPIC',
]);

/** TopicValidator.SYSTEM_TOPIC_PREFIX: any topic starting with it is a system topic. */
export const SYSTEM_TOPIC_PREFIX = 'rmq_sys_';

/** Topics a client may not send to (TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET); a broker answers NO_PERMISSION. */
export const NOT_ALLOWED_SEND_TOPICS: ReadonlySet<string> = new Set([
  'SCHEDULE_TOPIC_XXXX',
  'RMQ_SYS_TRANS_HALF_TOPIC',
  'RMQ_SYS_TRANS_OP_HALF_TOPIC',
  'TRANS_CHECK_MAX_TIME_TOPIC',
  'SELF_TEST_TOPIC',
  'OFFSET_MOVED_EVENT',
]);

const LEGAL_NAME = /^[%|a-zA-Z0-9_-]+$/;

/** TopicValidator.isTopicOrGroupIllegal: any character outside `[%|a-zA-Z0-9_-]`. */
export function isTopicOrGroupIllegal(name: string): boolean {
  return !LEGAL_NAME.test(name);
}

/** UtilAll.isBlank: empty or only whitespace. */
function isBlank(s: string): boolean {
  return s.trim().length === 0;
}

/** Java's remarks quote the name; a hostile name is cut so that the remark stays one short line. */
function shown(name: string): string {
  const oneLine = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name).slice(1, -1);
  return oneLine;
}

/** Why `topic` is not a valid topic name (TopicValidator.validateTopic's remark), or null when it is. */
export function checkTopicName(topic: unknown): string | null {
  if (typeof topic !== 'string' || isBlank(topic)) return 'The specified topic is blank.';
  if (isTopicOrGroupIllegal(topic))
    return `The specified topic: ${shown(topic)}, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`;
  if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || topic.startsWith(DLQ_GROUP_TOPIC_PREFIX)) {
    if (topic.length > RETRY_OR_DLQ_TOPIC_MAX_LENGTH) {
      return `The specified topic is DLQ or Retry topic: ${shown(topic)}, and it's longer than topic max length: ${RETRY_OR_DLQ_TOPIC_MAX_LENGTH}`;
    }
  } else if (topic.length > TOPIC_MAX_LENGTH) {
    return `The specified topic: ${shown(topic)}, is longer than topic max length: ${TOPIC_MAX_LENGTH}`;
  }
  return null;
}

/** Why `group` is not a valid group name (TopicValidator.validateGroup's remark), or null when it is. */
export function checkGroupName(group: unknown): string | null {
  if (typeof group !== 'string' || isBlank(group)) return 'The specified group is blank.';
  if (isTopicOrGroupIllegal(group))
    return `The specified group: ${shown(group)}, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`;
  if (group.length > GROUP_MAX_LENGTH)
    return `The specified group: ${shown(group)}, is longer than group max length: ${GROUP_MAX_LENGTH}`;
  return null;
}

/** TopicValidator.isSystemTopic. */
export function isSystemTopic(topic: string): boolean {
  return SYSTEM_TOPICS.has(topic) || topic.startsWith(SYSTEM_TOPIC_PREFIX);
}

/** TopicValidator.isNotAllowedSendTopic. */
export function isNotAllowedSendTopic(topic: string): boolean {
  return NOT_ALLOWED_SEND_TOPICS.has(topic);
}
