import { evaluateNode, type PropertyLookup, type SqlNode } from './expression.js';
import { JavaEvalFailure } from './java-values.js';
import { SqlParser } from './parser.js';

/** A message's properties: a plain object (own keys only are read), a Map, or a lookup function. */
export type Sql92Properties = Readonly<Record<string, string>> | ReadonlyMap<string, string> | PropertyLookup;

/**
 * A compiled SQL92 filter (Java's SqlFilter.compile → BooleanExpression). Compile once per
 * subscription; `matches` is what the broker asks of every message.
 */
export interface Sql92Filter {
  /** The expression as written. */
  readonly expression: string;
  /**
   * Where SelectorParser stopped reading, when it did so before the end: Java's start rule ends at
   * the first token that cannot continue the expression and ignores the rest (`a LIKE 'x%'` is
   * `a`, `a = 0x10` is `a = 0`). Null when the whole expression was read.
   */
  readonly ignoredFrom: number | null;
  /**
   * ExpressionMessageFilter.isMatchedByCommitLog: true only when the expression evaluates to
   * TRUE. NULL (a missing property), FALSE, and an evaluation Java throws on (a property that does
   * not parse as the number it is compared with, anywhere in the expression) are all false.
   */
  matches(properties: Sql92Properties): boolean;
  /** The evaluation itself: true, false, null (unknown), or 'error' when Java would throw. */
  evaluate(properties: Sql92Properties): boolean | null | 'error';
}

const hasOwn = Object.prototype.hasOwnProperty;

function lookup(p: Sql92Properties): PropertyLookup {
  if (typeof p === 'function') return p;
  if (p instanceof Map) return (name) => p.get(name);
  const o = p as Readonly<Record<string, string>>;
  // an own property only (an object's inherited `constructor` is not a message property)
  return (name) => {
    const v = o[name];
    return v !== undefined && (typeof v === 'string' ? hasOwn.call(o, name) : false) ? v : undefined;
  };
}

/**
 * Parse a SQL92 expression as Apache RocketMQ's SelectorParser does (5.x grammar, CONTAINS /
 * STARTSWITH / ENDSWITH included); SqlParseError with the position of what it refuses.
 */
export function compileSql92(expression: string): Sql92Filter {
  if (typeof expression !== 'string') throw new TypeError('compileSql92: the expression must be a string');
  const parser = new SqlParser(expression);
  const root: SqlNode = parser.parse();
  const ignoredFrom = parser.ignoredFrom;
  const evaluate = (properties: Sql92Properties): boolean | null | 'error' => {
    try {
      const v = evaluateNode(root, lookup(properties));
      return v === true ? true : v === false ? false : null;
    } catch (e) {
      if (e instanceof JavaEvalFailure) return 'error';
      throw e;
    }
  };
  return {
    expression,
    ignoredFrom,
    evaluate,
    matches: (properties) => evaluate(properties) === true,
  };
}
