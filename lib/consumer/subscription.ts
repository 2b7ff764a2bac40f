import { javaStringHash } from '../../protocol/index.js';

export const SUB_ALL = '*';
export const RETRY_GROUP_TOPIC_PREFIX = '%RETRY%';
export const DLQ_GROUP_TOPIC_PREFIX = '%DLQ%';

/** SubscriptionData as it travels in HEART_BEAT bodies (§8.1); key order is Java's alphabetical order. */
export interface SubscriptionData {
  classFilterMode: boolean;
  codeSet: number[];
  expressionType: 'TAG';
  subString: string;
  subVersion: number;
  tagsSet: string[];
  topic: string;
}

export function retryTopic(group: string): string {
  return RETRY_GROUP_TOPIC_PREFIX + group;
}
export function dlqTopic(group: string): string {
  return DLQ_GROUP_TOPIC_PREFIX + group;
}

/**
 * Parses a TAG expression as Java's FilterAPI.buildSubscriptionData: split on "||", trim, drop empty
 * parts; null, "" or "*" subscribe to everything (empty sets). Tag codes are Java String.hashCode().
 */
export function buildSubscriptionData(topic: string, expression: string | null | undefined, subVersion: number): SubscriptionData {
  const sub: SubscriptionData = {
    classFilterMode: false,
    codeSet: [],
    expressionType: 'TAG',
    subString: SUB_ALL,
    subVersion,
    tagsSet: [],
    topic,
  };
  if (expression === null || expression === undefined) return sub;
  const trimmed = expression.trim();
  if (trimmed === '' || trimmed === SUB_ALL) return sub;
  sub.subString = trimmed;
  for (const part of trimmed.split('||')) {
    const tag = part.trim();
    if (tag.length === 0 || sub.tagsSet.includes(tag)) continue;
    sub.tagsSet.push(tag);
    sub.codeSet.push(javaStringHash(tag));
  }
  return sub;
}

/**
 * Client-side re-check of a pulled message's tag (the broker filters by hash, which collides).
 * A message without a TAGS property is dropped when specific tags are subscribed, as in Java.
 */
export function tagMatches(sub: SubscriptionData, tags: string | undefined): boolean {
  if (sub.tagsSet.length === 0 || sub.classFilterMode) return true;
  return tags !== undefined && sub.tagsSet.includes(tags);
}
