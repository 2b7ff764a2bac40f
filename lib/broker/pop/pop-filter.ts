import {
  FilterExpressionError,
  ResponseCode,
  buildSubscriptionData,
  SqlLimitError,
} from '../../../protocol/internal.js';
import type { PopMessageRequestHeader } from '../../../protocol/custom-header/pop.js';
import { tagMatcher } from '../message-filter.js';
import { compileFilter, isTagType, recordMatcher, type RecordMatch } from '../sql-filter.js';
import type { BrokerContext } from '../processor/broker-context.js';

/** How one pop filters: the consume-queue tag matcher, and for SQL92 a fresh record matcher per pop attempt. */
export interface PopFilter {
  match: ((tagsCode: number) => boolean) | null;
  /** A record matcher with a whole evaluation budget, one per pop (each retry of a held pop gets its own); null for TAG. */
  newRecordMatcher: (() => BudgetedMatch) | null;
}

/** A record matcher that says whether its budget stopped a scan (records were left unevaluated). */
export interface BudgetedMatch {
  match: RecordMatch;
  budgetSpent: boolean;
}

type Refusal = { code: number; remark: string };

/** PopMessageProcessor's remark when the expression does not build (Java gives no reason; ours follows). */
const PARSE_FAILED = "parse the consumer's subscription failed";

/**
 * PopMessageProcessor's filter step: exp/expType of the header built as FilterAPI.build does; a
 * TAG expression filters on the consume queue, anything else is compiled as ConsumerFilterManager
 * does and evaluated over each record's properties (ExpressionMessageFilter), on the topic and on
 * its pop retry topic alike. Apache's PopMessageProcessor does not look at enablePropertyFilter
 * (the pull path does), so neither do we; the bounds of every SQL92 path hold: an expression past
 * sqlMaxLength / sqlMaxNodes is refused as one that does not parse (the bound named after Java's
 * remark), and one pop spends at most sqlEvaluationBudget, answering what it found by then.
 */
export function popFilter(ctx: BrokerContext, h: PopMessageRequestHeader): Refusal | PopFilter {
  // no expression is "*" as TAG, whatever the type says (PopMessageProcessor's else branch)
  const given = h.exp !== undefined && h.exp !== null && h.exp !== '';
  const exp = given ? h.exp! : '*';
  const type = given ? (h.expType ?? 'TAG') : 'TAG';
  if (!isTagType(type)) {
    const c = compileFilter(type, exp, ctx.limits);
    if (!c.ok) {
      const why = c.error instanceof SqlLimitError ? ` (${c.error.message})` : `: ${c.error.message}`;
      return { code: ResponseCode.SUBSCRIPTION_PARSE_FAILED, remark: PARSE_FAILED + why };
    }
    const budget = ctx.limits.sqlEvaluationBudget;
    const newRecordMatcher = (): BudgetedMatch => {
      const inner = recordMatcher(c.filter, budget);
      const m: BudgetedMatch = {
        budgetSpent: false,
        match: (record) => {
          const ok = inner(record);
          if (ok === null) m.budgetSpent = true;
          return ok;
        },
      };
      return m;
    };
    return { match: null, newRecordMatcher };
  }
  try {
    const sub = buildSubscriptionData(h.topic, exp, 0, 'TAG', { maxTags: ctx.limits.maxTagsPerSubscription });
    return { match: tagMatcher(sub), newRecordMatcher: null };
  } catch (err) {
    if (!(err instanceof FilterExpressionError)) throw err;
    return { code: ResponseCode.SUBSCRIPTION_PARSE_FAILED, remark: `${PARSE_FAILED}: ${err.message}` };
  }
}
