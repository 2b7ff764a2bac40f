import { SqlParseError } from './errors.js';

/**
 * The tokens of RocketMQ's SelectorParser.jj (filter module, 5.x). Keywords are case-insensitive;
 * identifiers are ASCII only (`[A-Za-z_$][A-Za-z0-9_$]*`); any other character is allowed only
 * inside a string literal or a comment.
 */
export type TokenKind =
  | 'EOF'
  | 'NOT'
  | 'AND'
  | 'OR'
  | 'BETWEEN'
  | 'IN'
  | 'TRUE'
  | 'FALSE'
  | 'NULL'
  | 'IS'
  | 'CONTAINS'
  | 'STARTSWITH'
  | 'ENDSWITH'
  | 'DECIMAL'
  | 'FLOAT'
  | 'STRING'
  | 'ID'
  | '='
  | '<>'
  | '>'
  | '>='
  | '<'
  | '<='
  | '('
  | ','
  | ')'
  | '+'
  | '-';

export interface Token {
  kind: TokenKind;
  image: string;
  /** UTF-16 offset of the token's first character. */
  pos: number;
}

const KEYWORDS = new Set<TokenKind>([
  'NOT',
  'AND',
  'OR',
  'BETWEEN',
  'IN',
  'TRUE',
  'FALSE',
  'NULL',
  'IS',
  'CONTAINS',
  'STARTSWITH',
  'ENDSWITH',
]);

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isIdStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
const isIdPart = (c: number): boolean => isIdStart(c) || isDigit(c);

/**
 * A lazy token stream, as JavaCC's token manager is: a token is read only when the parser looks
 * at it, so a character the grammar cannot read is an error only if the parser gets that far
 * (Java's parser has no `<EOF>` at the end of its start rule: `a = 1 b` is `a = 1`, while
 * `a = 1 !` fails on the one token the parser peeks past the expression).
 */
export class TokenStream {
  private readonly tokens: Token[] = [];
  private at = 0;
  private scan = 0;
  /**
   * The first CR or LF at or after `lineEndFrom` (the length when there is none). The "--" rule
   * needs the line end after each "--"; searching afresh for every one made `a=----…1` quadratic
   * (165 KB held a broker's event loop 14.7 s). Scan positions only grow, so the
   * searches cover disjoint stretches and add up to one pass over the expression.
   */
  private lineEndAt = -1;
  /** Characters the line-end searches have read (test/protocol/sql92.test.ts checks it is linear). */
  lineEndScanned = 0;

  constructor(private readonly src: string) {}

  private lineEnd(from: number): number {
    if (this.lineEndAt >= from) return this.lineEndAt;
    const s = this.src;
    const n = s.length;
    let j = from;
    while (j < n && s.charCodeAt(j) !== 10 && s.charCodeAt(j) !== 13) j++;
    this.lineEndScanned += j - from + 1;
    this.lineEndAt = j;
    return j;
  }

  /** The k-th token ahead (1 = the next one). */
  peek(k = 1): Token {
    while (this.tokens.length < this.at + k) this.tokens.push(this.next());
    return this.tokens[this.at + k - 1]!;
  }

  consume(): Token {
    const t = this.peek();
    this.at++;
    return t;
  }

  /** Consume a token of `kind`, or fail as JavaCC's jj_consume_token does. */
  expect(kind: TokenKind): Token {
    const t = this.peek();
    if (t.kind !== kind) throw unexpected(this.src, t, `"${kind}"`);
    return this.consume();
  }

  /** The longest match at the scan position (JavaCC's rule; a keyword wins a tie with ID). */
  private next(): Token {
    const s = this.src;
    const n = s.length;
    let i = this.scan;
    // white space and comments (SPECIAL_TOKEN / SKIP)
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) {
        i++;
        continue;
      }
      if (c === 45 && s.charCodeAt(i + 1) === 45) {
        // "--" comment: needs its line end, otherwise the two characters are two "-" tokens
        const j = this.lineEnd(i + 2);
        if (j < n) {
          i = j + (s.charCodeAt(j) === 13 && s.charCodeAt(j + 1) === 10 ? 2 : 1);
          continue;
        }
        break;
      }
      if (c === 47 && s.charCodeAt(i + 1) === 42) {
        const end = s.indexOf('*/', i + 2);
        if (end < 0) throw new SqlParseError(s, i, 'lexical error: unterminated comment');
        i = end + 2;
        continue;
      }
      break;
    }
    this.scan = i;
    if (i >= n) return { kind: 'EOF', image: '', pos: n };
    const c = s.charCodeAt(i);
    const tok = (kind: TokenKind, len: number): Token => {
      this.scan = i + len;
      return { kind, image: s.slice(i, i + len), pos: i };
    };
    if (isIdStart(c)) {
      let j = i + 1;
      while (j < n && isIdPart(s.charCodeAt(j))) j++;
      const up = s.slice(i, j).toUpperCase() as TokenKind;
      return tok(KEYWORDS.has(up) ? up : 'ID', j - i);
    }
    if (isDigit(c) || (c === 46 && isDigit(s.charCodeAt(i + 1)))) return this.number(i);
    if (c === 39) return this.string(i);
    const c1 = s.charCodeAt(i + 1);
    switch (c) {
      case 61:
        return tok('=', 1);
      case 60:
        return c1 === 62 ? tok('<>', 2) : c1 === 61 ? tok('<=', 2) : tok('<', 1);
      case 62:
        return c1 === 61 ? tok('>=', 2) : tok('>', 1);
      case 40:
        return tok('(', 1);
      case 44:
        return tok(',', 1);
      case 41:
        return tok(')', 1);
      case 43:
        return tok('+', 1);
      case 45:
        return tok('-', 1);
    }
    const ch = String.fromCodePoint(s.codePointAt(i)!);
    throw new SqlParseError(s, i, `lexical error: unexpected character ${JSON.stringify(ch)}`);
  }

  /** DECIMAL_LITERAL `0 | [1-9][0-9]*[lL]?` or FLOATING_POINT_LITERAL, whichever is longer. */
  private number(i: number): Token {
    const s = this.src;
    let j = i;
    while (isDigit(s.charCodeAt(j))) j++;
    const intDigits = j - i;
    let decimalEnd = -1;
    if (intDigits > 0) {
      if (s.charCodeAt(i) === 48) decimalEnd = i + 1;
      else {
        decimalEnd = j;
        const l = s.charCodeAt(j);
        if (l === 108 || l === 76) decimalEnd = j + 1;
      }
    }
    let floatEnd = -1;
    if (s.charCodeAt(j) === 46) {
      let k = j + 1;
      while (isDigit(s.charCodeAt(k))) k++;
      if (intDigits > 0 || k > j + 1) floatEnd = this.exponent(k) ?? k;
    } else if (intDigits > 0) {
      const e = this.exponent(j);
      if (e !== null) floatEnd = e;
    }
    const fl = floatEnd > decimalEnd;
    const end = fl ? floatEnd : decimalEnd;
    this.scan = end;
    return { kind: fl ? 'FLOAT' : 'DECIMAL', image: s.slice(i, end), pos: i };
  }

  /** The end of `E[+-]?[0-9]+` at k, or null when there is none. */
  private exponent(k: number): number | null {
    const s = this.src;
    const e = s.charCodeAt(k);
    if (e !== 101 && e !== 69) return null;
    let m = k + 1;
    if (s.charCodeAt(m) === 43 || s.charCodeAt(m) === 45) m++;
    if (!isDigit(s.charCodeAt(m))) return null;
    while (isDigit(s.charCodeAt(m))) m++;
    return m;
  }

  /**
   * STRING_LITERAL `'('' | [^'])*'`: the longest prefix that is a whole literal ("'a''" is the
   * literal 'a' followed by a stray quote).
   */
  private string(i: number): Token {
    const s = this.src;
    const n = s.length;
    let lastEnd = -1;
    let j = i + 1;
    while (j < n) {
      if (s.charCodeAt(j) === 39) {
        lastEnd = j + 1;
        if (s.charCodeAt(j + 1) !== 39) break;
        j += 2;
      } else j++;
    }
    if (lastEnd < 0) throw new SqlParseError(s, i, 'lexical error: unterminated string literal');
    this.scan = lastEnd;
    return { kind: 'STRING', image: s.slice(i, lastEnd), pos: i };
  }
}

export function unexpected(src: string, t: Token, expected: string): SqlParseError {
  const what = t.kind === 'EOF' ? 'the end of the expression' : JSON.stringify(t.image);
  return new SqlParseError(src, t.pos, `unexpected ${what}, expecting ${expected}`);
}
