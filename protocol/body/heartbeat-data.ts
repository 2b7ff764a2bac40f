import { FilterExpressionError } from '../errors.js';
import { javaStringHash } from '../java-hash.js';
import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import {
  asArray,
  asObject,
  bodyError,
  optBoolean,
  optNumber,
  optString,
  reqString,
  stringArray,
  type Obj,
} from './shape.js';

/**
 * One subscription of a consumer group as a heartbeat (or CHECK_CLIENT_CONFIG) carries it: the
 * topic, its filter expression and, for TAG expressions, the tags and their Java hashes. Build it
 * with buildSubscriptionData.
 */
export interface SubscriptionData {
  classFilterMode: boolean;
  topic: string;
  /** The expression; "*" = everything. */
  subString: string;
  tagsSet: string[];
  /** Java hash of each tag. */
  codeSet: number[];
  subVersion: number;
  expressionType: string;
}

/**
 * A consumer group's entry in a heartbeat: how it consumes (ConsumeType, MessageModel and
 * ConsumeFromWhere names) and what it subscribes to.
 */
export interface ConsumerData {
  groupName: string;
  consumeType: string;
  messageModel: string;
  consumeFromWhere: string;
  subscriptionDataSet: SubscriptionData[];
  unitMode: boolean;
}

/** A producer group's entry in a heartbeat: its name only. */
export interface ProducerData {
  groupName: string;
}

/**
 * HEART_BEAT body (docs/protocol-facts.md#heartbeat-data): the client's id and the groups it produces and
 * consumes for. Keys are
 * written sorted, so the 4.9 literal example comes out byte for byte; the 5.x fields
 * (heartbeatFingerprint, withoutSub) are written only when set.
 */
export interface HeartbeatData {
  clientID: string;
  producerDataSet: ProducerData[];
  consumerDataSet: ConsumerData[];
  /** 5.x only. */
  heartbeatFingerprint?: number | undefined;
  /** 5.x only. */
  withoutSub?: boolean | undefined;
}

/** How the FilterExpressionError of an expression over `maxTags` begins. */
export const TOO_MANY_TAGS = 'the expression has more than';

/**
 * SubscriptionData for `topic` and an expression, as Java's FilterAPI.build /
 * buildSubscriptionData make it (remoting/.../protocol/filter/FilterAPI.java in 5.x,
 * common/.../filter/FilterAPI.java in 4.9, the same rules):
 *
 * * `expressionType` TAG, or blank (null, "", spaces) which means TAG (the result says "TAG"):
 *   * null, "" or exactly "*" subscribe to everything: subString "*", empty sets.
 *   * anything else is split on "||" (Java's String.split: a string made only of "||" splits into
 *     nothing and Java throws "subString split error"; we refuse it too, in our words), every part trimmed, empty parts
 *     dropped. tagsSet and codeSet are Java HashSets: each tag and each hash (String.hashCode)
 *     once, so two tags whose hashes collide ("Aa", "BB") leave one code. subString is kept as
 *     written.
 *   * hence " * " is not "everything": it is the one tag "*" (code 42), and the broker then
 *     delivers only messages tagged "*"; a blank "  " gives empty sets under a subString that is
 *     not "*", which the broker's tag filter matches against nothing.
 * * any other type (SQL92): subString as written, no sets; an empty expression is refused
 *   (Java: "Expression can't be null!"), which a broker answers SUBSCRIPTION_PARSE_FAILED.
 *
 * Linear in the length of the expression (a Set per kind, not a search of the array per tag: a
 * 629 KB expression of 80 000 tags took 14 s with `Array.includes`). Java bounds neither the tags
 * nor the expression (only the frame); `options.maxTags` stops at that many distinct-or-not
 * non-empty tags, for a server that parses what any peer sends (the embedded broker passes its
 * maxTagsPerSubscription, 1024 by default).
 *
 * Errors are FilterExpressionError.
 */
export function buildSubscriptionData(
  topic: string,
  subString: string | null | undefined,
  subVersion: number,
  expressionType: string | null | undefined = 'TAG',
  options: { maxTags?: number } = {},
): SubscriptionData {
  const tag = expressionType == null || expressionType.trim() === '' || expressionType === 'TAG';
  const sd: SubscriptionData = {
    classFilterMode: false,
    topic,
    subString: '*',
    tagsSet: [],
    codeSet: [],
    subVersion,
    expressionType: tag ? 'TAG' : expressionType,
  };
  if (!tag) {
    if (subString == null || subString === '')
      throw new FilterExpressionError(`the ${expressionType} expression of topic ${topic} is empty`);
    sd.subString = subString;
    return sd;
  }
  if (subString == null || subString === '' || subString === '*') return sd;
  const parts = subString.split('||');
  if (parts.every((p) => p === ''))
    throw new FilterExpressionError(
      `the tag expression ${JSON.stringify(subString.slice(0, 64))} of topic ${topic} names no tag`,
    );
  sd.subString = subString;
  const maxTags = options.maxTags ?? Infinity;
  const tags = new Set<string>();
  const codes = new Set<number>();
  let count = 0;
  for (const part of parts) {
    const t = part.trim();
    if (t.length === 0) continue;
    if (++count > maxTags) throw new FilterExpressionError(`${TOO_MANY_TAGS} ${maxTags} tags`);
    tags.add(t);
    codes.add(javaStringHash(t));
  }
  sd.tagsSet = [...tags];
  sd.codeSet = [...codes];
  return sd;
}

/** A HEART_BEAT body as JSON bytes, keys sorted as Java's fastjson writes them. */
export function encodeHeartbeatData(hb: HeartbeatData): Buffer {
  return Buffer.from(toJavaJson(hb), 'utf8');
}

/**
 * Parse a HEART_BEAT body. A consumer's missing values take Java's defaults (CONSUME_PASSIVELY,
 * CLUSTERING, CONSUME_FROM_LAST_OFFSET, TAG, subString "*"); a body of another shape throws a
 * ProtocolError naming the bad path.
 */
export function decodeHeartbeatData(body: Buffer | Uint8Array): HeartbeatData {
  const o = asObject(parseFastjsonBody(body), 'HeartbeatData');
  const hb: HeartbeatData = {
    clientID: reqString(o, 'clientID', 'HeartbeatData'),
    producerDataSet: asArray(o.producerDataSet, 'producerDataSet').map((p, i) => ({
      groupName: reqString(asObject(p, `producerDataSet[${i}]`), 'groupName', `producerDataSet[${i}]`),
    })),
    consumerDataSet: asArray(o.consumerDataSet, 'consumerDataSet').map((c, i) =>
      readConsumerData(c, `consumerDataSet[${i}]`),
    ),
  };
  if (o.heartbeatFingerprint != null)
    hb.heartbeatFingerprint = optNumber(o, 'heartbeatFingerprint', 'HeartbeatData', 0);
  if (o.withoutSub != null) hb.withoutSub = optBoolean(o, 'withoutSub', 'HeartbeatData', false);
  return hb;
}

function readConsumerData(v: unknown, path: string): ConsumerData {
  const o = asObject(v, path);
  return {
    groupName: reqString(o, 'groupName', path),
    consumeType: optString(o, 'consumeType', path) ?? 'CONSUME_PASSIVELY',
    messageModel: optString(o, 'messageModel', path) ?? 'CLUSTERING',
    consumeFromWhere: optString(o, 'consumeFromWhere', path) ?? 'CONSUME_FROM_LAST_OFFSET',
    subscriptionDataSet: asArray(o.subscriptionDataSet, `${path}.subscriptionDataSet`).map((s, i) =>
      readSubscriptionData(s, `${path}.subscriptionDataSet[${i}]`),
    ),
    unitMode: optBoolean(o, 'unitMode', path, false),
  };
}

export function readSubscriptionData(v: unknown, path: string): SubscriptionData {
  const o: Obj = asObject(v, path);
  const codes = asArray(o.codeSet, `${path}.codeSet`).map((c, i) => {
    if (typeof c !== 'number' || !Number.isInteger(c)) throw bodyError(`${path}.codeSet[${i}]`, 'is not an int');
    return c;
  });
  return {
    classFilterMode: optBoolean(o, 'classFilterMode', path, false),
    topic: reqString(o, 'topic', path),
    subString: optString(o, 'subString', path) ?? '*',
    tagsSet: stringArray(o.tagsSet, `${path}.tagsSet`),
    codeSet: codes,
    subVersion: optNumber(o, 'subVersion', path, 0),
    expressionType: optString(o, 'expressionType', path) ?? 'TAG',
  };
}

/** `HeartbeatData.encode(hb)` / `HeartbeatData.decode(body)`. */
export const HeartbeatData = { encode: encodeHeartbeatData, decode: decodeHeartbeatData } as const;
