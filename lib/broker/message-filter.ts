import type { SubscriptionData } from '../../protocol/index.js';

/**
 * ExpressionMessageFilter.isMatchedByConsumeQueue for TAG subscriptions: "*" (SUB_ALL) and
 * class-filter mode match everything (null = no filter); otherwise the consume-queue entry's tag
 * code, as a Java int, must be in the subscription's code set. The subscription is used as the
 * client built it (FilterAPI.buildSubscriptionData): the broker does not re-derive the code set.
 */
export function tagMatcher(sub: SubscriptionData | null): ((tagsCode: number) => boolean) | null {
  if (!sub || sub.classFilterMode || sub.subString === '*' || sub.expressionType !== 'TAG') return null;
  const codes = new Set(sub.codeSet.map((c) => c | 0));
  return (tagsCode) => codes.has(tagsCode | 0);
}
