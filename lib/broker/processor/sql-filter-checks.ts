import { ResponseCode, type SubscriptionData } from '../../../protocol/index.js';
import { FILTER_DATA_NOT_EXIST_REMARK, compileFilter, filterOfSubscription, isTagType, propertyFilterDisabledRemark, recordMatcher } from '../sql-filter.js';
import type { BrokerContext } from './broker-context.js';

type Refusal = { code: number; remark: string };

/**
 * ClientManageProcessor.checkClientConfig for one subscription: a TAG one is fine; a property
 * filter needs enablePropertyFilter (SYSTEM_ERROR otherwise) and an expression that compiles
 * (SUBSCRIPTION_PARSE_FAILED with the parse error, naming its position). Null when accepted.
 */
export function checkFilterConfig(ctx: BrokerContext, sd: SubscriptionData): Refusal | null {
  if (isTagType(sd.expressionType)) return null;
  if (!ctx.enablePropertyFilter) return { code: ResponseCode.SYSTEM_ERROR, remark: propertyFilterDisabledRemark(sd.expressionType) };
  const c = compileFilter(sd.expressionType, sd.subString);
  return c.ok ? null : { code: ResponseCode.SUBSCRIPTION_PARSE_FAILED, remark: c.error.message };
}

/**
 * PullMessageProcessor's property-filter steps, in Java's order: a registered subscription whose
 * expression did not compile has no filter data (FILTER_DATA_NOT_EXIST); then a broker without
 * enablePropertyFilter answers SYSTEM_ERROR. A pull carrying its own expression
 * (FLAG_SUBSCRIPTION) that does not compile is SUBSCRIPTION_PARSE_FAILED (Java builds no filter
 * and, with assertions off, delivers everything; we refuse). Otherwise the record matcher the
 * store applies, or null for a TAG subscription.
 */
export function pullFilter(
  ctx: BrokerContext,
  sub: SubscriptionData,
  fromRequest: boolean,
): Refusal | { matchRecord: ((record: Buffer) => boolean) | null } {
  if (isTagType(sub.expressionType)) return { matchRecord: null };
  // A pull's own expression is not compiled on a broker that serves no property filter: the answer
  // is SYSTEM_ERROR either way, and the parse was the cost any client could make the broker pay
  // (issue 29, H1). A registered subscription was compiled (and cached) when it was registered.
  if (fromRequest && !ctx.enablePropertyFilter) return { code: ResponseCode.SYSTEM_ERROR, remark: propertyFilterDisabledRemark(sub.expressionType) };
  const c = filterOfSubscription(sub);
  if (!c.ok && !fromRequest) return { code: ResponseCode.FILTER_DATA_NOT_EXIST, remark: FILTER_DATA_NOT_EXIST_REMARK };
  if (!ctx.enablePropertyFilter) return { code: ResponseCode.SYSTEM_ERROR, remark: propertyFilterDisabledRemark(sub.expressionType) };
  if (!c.ok) return { code: ResponseCode.SUBSCRIPTION_PARSE_FAILED, remark: `parse the consumer's subscription failed: ${c.error.message}` };
  return { matchRecord: matchers(c.filter) };
}

const recordMatchers = new WeakMap<object, (record: Buffer) => boolean>();
function matchers(filter: object & Parameters<typeof recordMatcher>[0]): (record: Buffer) => boolean {
  let m = recordMatchers.get(filter);
  if (!m) {
    m = recordMatcher(filter);
    recordMatchers.set(filter, m);
  }
  return m;
}
