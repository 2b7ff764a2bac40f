import type { SubscriptionData } from '../../../protocol/index.js';

// SubscriptionData, buildSubscriptionData (FilterAPI), retryTopic and dlqTopic come from protocol/.
export type { SubscriptionData } from '../../../protocol/index.js';

/**
 * Client-side re-check of a pulled message's tag (the broker filters by hash, which collides).
 * A message without a TAGS property is dropped when specific tags are subscribed, as in Java.
 */
export function tagMatches(sub: SubscriptionData, tags: string | undefined): boolean {
  if (sub.tagsSet.length === 0 || sub.classFilterMode) return true;
  return tags !== undefined && sub.tagsSet.includes(tags);
}
