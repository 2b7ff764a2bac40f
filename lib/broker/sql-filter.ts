import {
  MessageSysFlag,
  SqlLimitError,
  SqlParseError,
  compileSql92,
  decodeProperties,
  type Sql92Filter,
  type SubscriptionData,
} from '../../protocol/internal.js';
import { brokerSwitchCheck } from './option-check.js';

/** The broker's enablePropertyFilter option: a boolean, default false (Apache's BrokerConfig). */
export function resolveEnablePropertyFilter(v: unknown): boolean {
  if (v === undefined) return false;
  return brokerSwitchCheck.boolean('enablePropertyFilter', v);
}

/** ExpressionType.isTagType: null, "" and "TAG" are tag subscriptions; anything else is a property filter. */
export function isTagType(type: string | null | undefined): boolean {
  return type == null || type === '' || type === 'TAG';
}

/** The broker's answer when a client asks for a filter it has not been configured for (ClientManageProcessor, PullMessageProcessor). */
export function propertyFilterDisabledRemark(type: string): string {
  return `The broker does not support consumer to filter message by ${type}`;
}

/** PullMessageProcessor's FILTER_DATA_NOT_EXIST remark: the registered expression did not compile. */
export const FILTER_DATA_NOT_EXIST_REMARK =
  "The broker's consumer filter data is not exist!Your expression may be wrong!";

export type CompiledFilter = { ok: true; filter: Sql92Filter } | { ok: false; error: Error };

/** The broker's bounds on an expression (BrokerLimits' sqlMaxLength and sqlMaxNodes). */
export interface SqlExpressionLimits {
  sqlMaxLength: number;
  sqlMaxNodes: number;
}

/**
 * FilterFactory.INSTANCE.get(type).compile(expression): SQL92 is the one type Apache registers;
 * any other is refused (Java fails on the missing FilterSpi). An expression past the broker's
 * bounds is refused as one that does not parse (SqlLimitError naming sqlMaxLength or
 * sqlMaxNodes): its length before any parse, its nodes as soon as the parser passes them.
 */
export function compileFilter(type: string, expression: string, limits: SqlExpressionLimits): CompiledFilter {
  if (type !== 'SQL92') return { ok: false, error: new Error(`no filter for expression type ${type}`) };
  const { sqlMaxLength: maxLength, sqlMaxNodes: maxNodes } = limits;
  if (expression.length > maxLength) {
    return {
      ok: false,
      error: new SqlLimitError(expression, maxLength, 'maxLength', maxLength, expression.length, 'sqlMaxLength'),
    };
  }
  // brokers of one process may have different bounds: an outcome is reused under the same ones only
  const key = `${maxNodes}:${expression}`;
  const cached = parseCache.get(key);
  if (cached) return cached;
  let c: CompiledFilter;
  parses++;
  try {
    c = { ok: true, filter: compileSql92(expression, { maxNodes, options: { maxNodes: 'sqlMaxNodes' } }) };
  } catch (err) {
    if (!(err instanceof SqlParseError)) throw err;
    c = { ok: false, error: err };
  }
  // SelectorParser's PARSE_CACHE: the last 100 expressions (outcomes included), so a pull that
  // carries its own expression (FLAG_SUBSCRIPTION, every pull of a lite-pull consumer) and
  // CHECK_CLIENT_CONFIG do not parse it again; a compiled filter is immutable, so it is shared
  if (parseCache.size >= PARSE_CACHE_SIZE) parseCache.delete(parseCache.keys().next().value!);
  parseCache.set(key, c);
  return c;
}
const PARSE_CACHE_SIZE = 100;
const parseCache = new Map<string, CompiledFilter>();

/**
 * One compiled filter per registered subscription (ConsumerFilterManager keeps one per group and
 * topic, compiled when the heartbeat registers it): a pull does not parse the expression again.
 * A subscription is never changed once registered (a heartbeat replaces it), so the WeakMap entry
 * lives as long as the subscription does.
 */
const compiled = new WeakMap<SubscriptionData, CompiledFilter>();

let parses = 0;
/** SQL92 expressions parsed by this process so far (tests count them: a request must not cost a parse it does not need). */
export function sqlParseCount(): number {
  return parses;
}

export function filterOfSubscription(sub: SubscriptionData, limits: SqlExpressionLimits): CompiledFilter {
  let c = compiled.get(sub);
  if (!c) {
    c = compileFilter(sub.expressionType, sub.subString, limits);
    compiled.set(sub, c);
  }
  return c;
}

/**
 * What one pull decides of a stored record: true delivers, false does not, null means the pull's
 * evaluation budget is spent and the record was not evaluated (the scan stops before it).
 */
export type RecordMatch = (record: Buffer) => boolean | null;

/** Properties bytes decoded per evaluation step: decoding 4 bytes costs about what evaluating a node does. */
const PROPERTY_BYTES_PER_STEP = 4;

/** Steps SQL92 pulls spent, process-wide (tests read them: a pull must not spend past its budget). */
export interface SqlEvaluationCounts {
  /** Pulls that evaluated records. */
  pulls: number;
  /** Nodes evaluated, all pulls together (each comparison is one, its operands one each). */
  nodes: number;
  /** Steps charged, all pulls together: nodes, plus one per 4 properties bytes decoded. */
  steps: number;
  /** The most steps one pull spent. */
  maxStepsPerPull: number;
  /** Pulls that stopped because their budget was spent. */
  budgetStops: number;
}
const counts: SqlEvaluationCounts = { pulls: 0, nodes: 0, steps: 0, maxStepsPerPull: 0, budgetStops: 0 };
export function sqlEvaluationCounts(): SqlEvaluationCounts {
  return { ...counts };
}
/** Zero the counts (a test that asserts maxStepsPerPull for its own pulls). */
export function resetSqlEvaluationCounts(): void {
  Object.assign(counts, { pulls: 0, nodes: 0, steps: 0, maxStepsPerPull: 0, budgetStops: 0 });
}

/**
 * ExpressionMessageFilter.isMatchedByCommitLog over the stored records of one pull: each record's
 * properties (MessageDecoder.decodeProperties) evaluated by the filter; TRUE delivers. A record
 * too damaged to find its properties in is not delivered.
 *
 * Java evaluates on a pull thread pool; here it runs on the broker's only event loop, so one pull
 * spends at most `budget` steps (a node evaluated, or 4 properties bytes decoded): a record whose
 * worst case (the filter's nodes and its properties) would pass the budget is left for the next
 * pull (a 65 536-comparison OR over 800 records would hold the loop 8 s). The first
 * record of a pull is always evaluated, so every pull moves on.
 */
export function recordMatcher(filter: Sql92Filter, budget: number): RecordMatch {
  const meter = { steps: 0 };
  let spent = 0;
  let evaluated = false;
  return (record) => {
    const props = recordPropertiesText(record);
    const decodeSteps = Math.ceil((props?.length ?? 0) / PROPERTY_BYTES_PER_STEP);
    if (evaluated && spent + decodeSteps + filter.nodes > budget) {
      counts.budgetStops++;
      return null;
    }
    if (!evaluated) counts.pulls++;
    evaluated = true;
    const before = meter.steps;
    const ok = props !== null && filter.matches(decodeProperties(props), meter);
    const nodes = meter.steps - before;
    spent += nodes + decodeSteps;
    counts.nodes += nodes;
    counts.steps += nodes + decodeSteps;
    if (spent > counts.maxStepsPerPull) counts.maxStepsPerPull = spent;
    return ok;
  };
}

/**
 * The properties string of one stored record (docs/protocol-facts.md#stored-record): after the fixed fields, the two
 * hosts (8 or 20 bytes by the sys flags), the body, the topic (1-byte length in magic v1, 2 in
 * v2) and a 2-byte properties length. Null if the lengths run past the record.
 */
export function recordPropertiesText(b: Buffer): string | null {
  if (b.length < 56) return null;
  const sysFlag = b.readInt32BE(36);
  const v2 = b.readInt32BE(4) === (0xdaa320ab | 0);
  let p = 48 + ((sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0 ? 20 : 8) + 8;
  p += (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) !== 0 ? 20 : 8;
  p += 4 + 8; // reconsume times, prepared transaction offset
  if (p + 4 > b.length) return null;
  const bodyLen = b.readInt32BE(p);
  if (bodyLen < 0) return null;
  p += 4 + bodyLen;
  if (p + (v2 ? 2 : 1) > b.length) return null;
  const topicLen = v2 ? b.readUInt16BE(p) : b.readUInt8(p);
  p += (v2 ? 2 : 1) + topicLen;
  if (p + 2 > b.length) return null;
  const propLen = b.readUInt16BE(p);
  p += 2;
  if (p + propLen > b.length) return null;
  return b.toString('utf8', p, p + propLen);
}
