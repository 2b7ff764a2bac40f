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
  override readonly name = 'SqlParseError';
  override readonly errorCode = 'ERR_SQL_PARSE';
  readonly expression: string;
  readonly position: number;
  readonly line: number;
  readonly column: number;
  /** The reason alone, without the position. */
  readonly reason: string;
  constructor(expression: string, position: number, reason: string) {
    const { line, column } = lineColumn(expression, position);
    super(`SQL92 expression: ${reason} at position ${position} (line ${line}, column ${column})`);
    this.expression = expression;
    this.position = position;
    this.line = line;
    this.column = column;
    this.reason = reason;
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
