import {
  MessageSysFlag,
  SqlParseError,
  compileSql92,
  decodeProperties,
  type Sql92Filter,
  type SubscriptionData,
} from '../../protocol/internal.js';
import { BrokerOptionError } from './errors.js';

/** The broker's enablePropertyFilter option: a boolean, default false (Apache's BrokerConfig). */
export function resolveEnablePropertyFilter(v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new BrokerOptionError('enablePropertyFilter', `must be a boolean, got ${JSON.stringify(v)}`);
  return v;
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
export const FILTER_DATA_NOT_EXIST_REMARK = "The broker's consumer filter data is not exist!Your expression may be wrong!";

export type CompiledFilter = { ok: true; filter: Sql92Filter } | { ok: false; error: Error };

/**
 * FilterFactory.INSTANCE.get(type).compile(expression): SQL92 is the one type Apache registers;
 * any other is refused (Java fails on the missing FilterSpi).
 */
export function compileFilter(type: string, expression: string): CompiledFilter {
  if (type !== 'SQL92') return { ok: false, error: new Error(`no filter for expression type ${type}`) };
  const cached = parseCache.get(expression);
  if (cached) return cached;
  let c: CompiledFilter;
  parses++;
  try {
    c = { ok: true, filter: compileSql92(expression) };
  } catch (err) {
    if (!(err instanceof SqlParseError)) throw err;
    c = { ok: false, error: err };
  }
  // SelectorParser's PARSE_CACHE: the last 100 expressions (outcomes included), so a pull that
  // carries its own expression (FLAG_SUBSCRIPTION, every pull of a lite-pull consumer) and
  // CHECK_CLIENT_CONFIG do not parse it again; a compiled filter is immutable, so it is shared
  if (parseCache.size >= PARSE_CACHE_SIZE) parseCache.delete(parseCache.keys().next().value!);
  parseCache.set(expression, c);
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

export function filterOfSubscription(sub: SubscriptionData): CompiledFilter {
  let c = compiled.get(sub);
  if (!c) {
    c = compileFilter(sub.expressionType, sub.subString);
    compiled.set(sub, c);
  }
  return c;
}

/**
 * ExpressionMessageFilter.isMatchedByCommitLog over a stored record: the record's properties
 * (MessageDecoder.decodeProperties) evaluated by the filter; TRUE delivers. A record too damaged
 * to find its properties in is not delivered.
 */
export function recordMatcher(filter: Sql92Filter): (record: Buffer) => boolean {
  return (record) => {
    const props = recordPropertiesText(record);
    return props !== null && filter.matches(decodeProperties(props));
  };
}

/**
 * The properties string of one stored record (§7.1 layout): after the fixed fields, the two
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
