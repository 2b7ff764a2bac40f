import {
  JavaEvalFailure,
  isJavaNumber,
  jDouble,
  jInt,
  jLong,
  javaCompare,
  javaEquals,
  parseJavaDouble,
  type JavaValue,
} from './java-values.js';

/**
 * The tree SelectorParser builds, one node per Java expression class, because the parser's
 * checks depend on those classes (a BooleanExpression cannot be compared with `>`, only a
 * property takes IN, a boolean constant cannot be compared with a non-boolean one).
 */
export type SqlNode =
  | { k: 'const'; v: JavaValue; bool: boolean }
  | { k: 'prop'; name: string }
  | { k: 'neg'; e: SqlNode }
  | { k: 'not'; e: SqlNode }
  | { k: 'cast'; e: SqlNode }
  | { k: 'and' | 'or'; l: SqlNode; r: SqlNode }
  | { k: 'eq'; l: SqlNode; r: SqlNode }
  | { k: 'cmp'; op: '>' | '>=' | '<' | '<='; l: SqlNode; r: SqlNode }
  | { k: 'in'; e: SqlNode; list: ReadonlySet<string>; not: boolean }
  | { k: 'str'; op: 'CONTAINS' | 'STARTSWITH' | 'ENDSWITH'; not: boolean; e: SqlNode; search: string };

/** Java's BooleanExpression: what AND, OR and NOT take, and what `>` refuses. */
export function isBooleanNode(n: SqlNode): boolean {
  return n.k === 'const' ? n.bool : n.k !== 'prop' && n.k !== 'neg';
}

/** A message's property by name (undefined when it has none). */
export type PropertyLookup = (name: string) => string | undefined;

/** Counts the nodes evaluated (one step each), so a caller can bound what it spends on evaluations. */
export interface EvalMeter {
  steps: number;
}

/**
 * Expression.evaluate: TRUE, FALSE, null or a value, in Java's order of evaluation and with its
 * short cuts, since a failed conversion (JavaEvalFailure) anywhere ends the whole evaluation.
 */
export function evaluateNode(n: SqlNode, get: PropertyLookup, m: EvalMeter): JavaValue {
  m.steps++;
  switch (n.k) {
    case 'const':
      return n.v;
    case 'prop':
      return get(n.name) ?? null;
    case 'neg': {
      const v = evaluateNode(n.e, get, m);
      if (!isJavaNumber(v)) return null;
      if (v.t === 'i') return jInt(-v.v | 0);
      if (v.t === 'l') return jLong(BigInt.asIntN(64, -v.v));
      return jDouble(-v.v);
    }
    case 'not': {
      const v = evaluateNode(n.e, get, m);
      return v === null ? null : !v;
    }
    case 'cast': {
      const v = evaluateNode(n.e, get, m);
      if (v === null) return null;
      return v === true;
    }
    case 'and': {
      const l = evaluateNode(n.l, get, m);
      if (l === false) return false;
      const r = evaluateNode(n.r, get, m);
      if (r === false) return false;
      return l === null || r === null ? null : true;
    }
    case 'or': {
      const l = evaluateNode(n.l, get, m);
      if (l === true) return true;
      const r = evaluateNode(n.r, get, m);
      if (r === true) return true;
      return l === null || r === null ? null : false;
    }
    case 'eq': {
      const l = evaluateNode(n.l, get, m);
      const r = evaluateNode(n.r, get, m);
      if (l === null || r === null) return l === null && r === null ? true : l === null ? null : false;
      return javaEquals(l, r) || javaCompare(l, r) === 0;
    }
    case 'cmp': {
      const l = evaluateNode(n.l, get, m);
      if (l === null) return null;
      const r = evaluateNode(n.r, get, m);
      if (r === null) return null;
      let c: number;
      if (typeof l === 'string' && typeof r === 'string') {
        // two Strings: both parsed as Double, or the evaluation fails
        c = javaCompare(stringToDouble(l)!, stringToDouble(r)!);
      } else c = javaCompare(l, r);
      switch (n.op) {
        case '>':
          return c > 0;
        case '>=':
          return c >= 0;
        case '<':
          return c < 0;
        case '<=':
          return c <= 0;
      }
      break;
    }
    case 'in': {
      const v = evaluateNode(n.e, get, m);
      if (typeof v !== 'string') return null;
      return n.list.has(v) !== n.not;
    }
    case 'str': {
      if (n.search.length === 0) return false;
      const v = evaluateNode(n.e, get, m);
      if (typeof v !== 'string') return false;
      const hit =
        n.op === 'CONTAINS'
          ? v.includes(n.search)
          : n.op === 'STARTSWITH'
            ? v.startsWith(n.search)
            : v.endsWith(n.search);
      return hit !== n.not;
    }
  }
  return null;
}

function stringToDouble(s: string): JavaValue {
  try {
    return parseJavaDouble(s);
  } catch (e) {
    throw e instanceof JavaEvalFailure
      ? new JavaEvalFailure(`It's illegal to compare string by '>=', '>', '<', '<='. ${e.reason}`)
      : e;
  }
}
