import type { SubscriptionData } from '../../protocol/index.js';

type Matcher = (tagsCode: number) => boolean;

/** One matcher per registered subscription, so a pull does not rebuild the code set every time. */
const matchers = new WeakMap<SubscriptionData, Matcher>();

/**
 * ExpressionMessageFilter.isMatchedByConsumeQueue for TAG subscriptions: "*" (SUB_ALL) and
 * class-filter mode match everything (null = no filter); otherwise the consume-queue entry's tag
 * code, as a Java int, must be in the subscription's code set. The subscription is used as the
 * client built it (FilterAPI.buildSubscriptionData): the broker does not re-derive the code set.
 * A subscription is not changed once registered (a heartbeat replaces it), so its matcher is kept.
 */
export function tagMatcher(sub: SubscriptionData | null): Matcher | null {
  if (!sub || sub.classFilterMode || sub.subString === '*' || sub.expressionType !== 'TAG') return null;
  let m = matchers.get(sub);
  if (!m) {
    const codes = new Set(sub.codeSet.map((c) => c | 0));
    m = (tagsCode) => codes.has(tagsCode | 0);
    matchers.set(sub, m);
  }
  return m;
}
