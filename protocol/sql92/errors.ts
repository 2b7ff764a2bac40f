import { RocketwireError } from '../errors.js';

/**
 * A SQL92 filter expression that Apache RocketMQ's SelectorParser refuses (a lexical error, a
 * grammar error, or one of the checks its expression classes make while the tree is built: `a =
 * NULL`, `'x' > 1`, `BETWEEN 5 AND 1`, `0.0`…). `position` is the 0-based UTF-16 offset in
 * `expression` where the trouble was found; `line` and `column` (1-based) say the same for a
 * multi-line expression.
 * @category Errors
 */
export class SqlParseError extends RocketwireError {
  override readonly name: string = 'SqlParseError';
  override readonly errorCode: string = 'ERR_SQL_PARSE';
  readonly expression: string;
  readonly position: number;
  readonly line: number;
  readonly column: number;
  /** The reason alone, without the position. */
  readonly reason: string;
  /** `hint`, when given, follows the position in the message (what to do about it). */
  constructor(expression: string, position: number, reason: string, hint?: string) {
    const { line, column } = lineColumn(expression, position);
    super(
      `SQL92 expression: ${reason} at position ${position} (line ${line}, column ${column})${hint ? `; ${hint}` : ''}`,
    );
    this.expression = expression;
    this.position = position;
    this.line = line;
    this.column = column;
    this.reason = reason;
  }
}

/** The bounds an expression is checked against: its length in UTF-16 characters, and its nodes (SqlLimitError). */
export type SqlLimitName = 'maxLength' | 'maxNodes';

/**
 * An expression refused for its size, not its grammar: longer than `maxLength` characters, or
 * more than `maxNodes` nodes (each node is one step of an evaluation, so this bounds what one
 * message costs to filter). Apache's SelectorParser has no such bound; the embedded broker and,
 * when asked, the client check them (protocol/sql92/README.md). `limit` names the bound, `max` is
 * its value, `actual` what was found (for maxNodes, the count when the parser stopped, which is
 * past `max`, not the whole expression's), and `option` the option that raises it.
 * @category Errors
 */
export class SqlLimitError extends SqlParseError {
  override readonly name = 'SqlLimitError';
  override readonly errorCode = 'ERR_SQL_LIMIT';
  readonly limit: SqlLimitName;
  readonly max: number;
  readonly actual: number;
  readonly option: string;
  constructor(expression: string, position: number, limit: SqlLimitName, max: number, actual: number, option: string) {
    super(
      expression,
      position,
      `${actual} ${limit === 'maxLength' ? 'characters' : 'nodes'} exceed ${limit} (${max})`,
      `raise the option ${option}`,
    );
    this.limit = limit;
    this.max = max;
    this.actual = actual;
    this.option = option;
  }
}

function lineColumn(s: string, pos: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < pos && i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || (c === 13 && s.charCodeAt(i + 1) !== 10)) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: pos - start + 1 };
}
