import { SqlLimitError } from './errors.js';
import { evaluateNode, type EvalMeter, type PropertyLookup, type SqlNode } from './expression.js';
import { JavaEvalFailure } from './java-values.js';
import { SqlParser } from './parser.js';

export type { EvalMeter } from './expression.js';

/**
 * The bounds rocketwire suggests for an expression (Apache's SelectorParser has none): 64 KiB of
 * characters and 4096 nodes. Java clients send a few hundred characters, a few KB at most (the
 * largest expression of the golden vectors and interop tests is far below both); a hostile one
 * can send 16 MiB. The embedded broker enforces them by default (`sqlMaxLength`, `sqlMaxNodes`);
 * the client checks them when its `sqlLimits` option is set.
 */
export const SQL92_DEFAULT_MAX_LENGTH = 65_536;
/** The suggested bound on an expression's nodes (see SQL92_DEFAULT_MAX_LENGTH). */
export const SQL92_DEFAULT_MAX_NODES = 4096;

/**
 * Bounds for compileSql92 (none by default). `options` names, for the error, the options that
 * raise them where the caller took them from (the broker's `sqlMaxLength`, say).
 */
export interface Sql92Limits {
  /** Most UTF-16 characters of the expression. */
  maxLength?: number;
  /** Most nodes of its tree, counted as evaluated (the steps one evaluation may take). */
  maxNodes?: number;
  options?: { maxLength?: string; maxNodes?: string };
}

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
   * The nodes of the tree, counted as evaluated (a value two operators share counts twice): the
   * most steps one evaluation takes.
   */
  readonly nodes: number;
  /**
   * ExpressionMessageFilter.isMatchedByCommitLog: true only when the expression evaluates to
   * TRUE. NULL (a missing property), FALSE, and an evaluation Java throws on (a property that does
   * not parse as the number it is compared with, anywhere in the expression) are all false.
   */
  matches(properties: Sql92Properties, meter?: EvalMeter): boolean;
  /**
   * The evaluation itself: true, false, null (unknown), or 'error' when Java would throw. `meter`,
   * when given, has the nodes evaluated added to its `steps` (at most `nodes`).
   */
  evaluate(properties: Sql92Properties, meter?: EvalMeter): boolean | null | 'error';
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
 * STARTSWITH / ENDSWITH included); SqlParseError with the position of what it refuses, and
 * SqlLimitError (a SqlParseError) for an expression past `limits`, before it is read (length) or
 * as soon as its tree passes maxNodes.
 */
export function compileSql92(expression: string, limits: Sql92Limits = {}): Sql92Filter {
  if (typeof expression !== 'string') throw new TypeError('compileSql92: the expression must be a string');
  const maxLength = limits.maxLength ?? Infinity;
  if (expression.length > maxLength) {
    throw new SqlLimitError(
      expression,
      maxLength,
      'maxLength',
      maxLength,
      expression.length,
      limits.options?.maxLength ?? 'maxLength',
    );
  }
  const parser = new SqlParser(expression, limits.maxNodes ?? Infinity, limits.options?.maxNodes ?? 'maxNodes');
  const root: SqlNode = parser.parse();
  const { ignoredFrom, nodes } = parser;
  const evaluate = (properties: Sql92Properties, meter: EvalMeter = { steps: 0 }): boolean | null | 'error' => {
    try {
      const v = evaluateNode(root, lookup(properties), meter);
      return v === true ? true : v === false ? false : null;
    } catch (e) {
      if (e instanceof JavaEvalFailure) return 'error';
      throw e;
    }
  };
  return {
    expression,
    ignoredFrom,
    nodes,
    evaluate,
    matches: (properties, meter) => evaluate(properties, meter) === true,
  };
}
