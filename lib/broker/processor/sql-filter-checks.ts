import { ResponseCode, type SubscriptionData } from '../../../protocol/index.js';
import {
  FILTER_DATA_NOT_EXIST_REMARK,
  compileFilter,
  filterOfSubscription,
  isTagType,
  propertyFilterDisabledRemark,
  recordMatcher,
  type RecordMatch,
} from '../sql-filter.js';
import { SqlLimitError } from '../../../protocol/index.js';
import type { BrokerContext } from './broker-context.js';

type Refusal = { code: number; remark: string };

/**
 * ClientManageProcessor.checkClientConfig for one subscription: a TAG one is fine; a property
 * filter needs enablePropertyFilter (SYSTEM_ERROR otherwise) and an expression that compiles
 * (SUBSCRIPTION_PARSE_FAILED with the parse error, naming its position). Null when accepted.
 */
export function checkFilterConfig(ctx: BrokerContext, sd: SubscriptionData): Refusal | null {
  if (isTagType(sd.expressionType)) return null;
  if (!ctx.enablePropertyFilter)
    return { code: ResponseCode.SYSTEM_ERROR, remark: propertyFilterDisabledRemark(sd.expressionType) };
  const c = compileFilter(sd.expressionType, sd.subString, ctx.limits);
  return c.ok ? null : { code: ResponseCode.SUBSCRIPTION_PARSE_FAILED, remark: c.error.message };
}

/**
 * PullMessageProcessor's property-filter steps, in Java's order: a registered subscription whose
 * expression did not compile has no filter data (FILTER_DATA_NOT_EXIST); then a broker without
 * enablePropertyFilter answers SYSTEM_ERROR. A pull carrying its own expression
 * (FLAG_SUBSCRIPTION) that does not compile is SUBSCRIPTION_PARSE_FAILED (Java builds no filter
 * and, with assertions off, delivers everything; we refuse). An expression past sqlMaxLength or
 * sqlMaxNodes is one that does not compile, with the bound named in the remark. Otherwise the
 * record matcher the store applies, with this pull's evaluation budget, or null for a TAG
 * subscription.
 */
export function pullFilter(
  ctx: BrokerContext,
  sub: SubscriptionData,
  fromRequest: boolean,
): Refusal | { matchRecord: RecordMatch | null } {
  if (isTagType(sub.expressionType)) return { matchRecord: null };
  // A pull's own expression is not compiled on a broker that serves no property filter: the answer
  // is SYSTEM_ERROR either way, and the parse was the cost any client could make the broker pay
  // (a long expression's parse held the event loop). A registered subscription was compiled (and
  // cached) when it was registered.
  if (fromRequest && !ctx.enablePropertyFilter)
    return { code: ResponseCode.SYSTEM_ERROR, remark: propertyFilterDisabledRemark(sub.expressionType) };
  const c = filterOfSubscription(sub, ctx.limits);
  if (!c.ok && !fromRequest) {
    // Java's remark as is; a bound of ours (Java has none) is named after it
    const why = c.error instanceof SqlLimitError ? ` (${c.error.message})` : '';
    return { code: ResponseCode.FILTER_DATA_NOT_EXIST, remark: FILTER_DATA_NOT_EXIST_REMARK + why };
  }
  if (!ctx.enablePropertyFilter)
    return { code: ResponseCode.SYSTEM_ERROR, remark: propertyFilterDisabledRemark(sub.expressionType) };
  if (!c.ok)
    return {
      code: ResponseCode.SUBSCRIPTION_PARSE_FAILED,
      remark: `parse the consumer's subscription failed: ${c.error.message}`,
    };
  return { matchRecord: recordMatcher(c.filter, ctx.limits.sqlEvaluationBudget) };
}
