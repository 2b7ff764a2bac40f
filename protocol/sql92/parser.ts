import { SqlLimitError, SqlParseError } from './errors.js';
import { isBooleanNode, type SqlNode } from './expression.js';
import { javaCompare, javaValueText, jDouble, jInt, jLong, JavaEvalFailure, type JavaValue } from './java-values.js';
import { TokenStream, unexpected, type Token } from './lexer.js';

/**
 * Nesting deeper than this (parentheses, NOT, signs) is refused. Java's parser recurses as ours
 * does and fails with a StackOverflowError somewhere in the thousands; a broker that compiles
 * what any client sends must refuse before its own stack runs out.
 */
export const MAX_SQL_NESTING = 200;
/** The deepest tree evaluated (a chain of 1000 ORs is 1000 deep: Java evaluates it recursively). */
export const MAX_SQL_TREE_DEPTH = 1000;

const NULL_CONST: SqlNode = { k: 'const', v: null, bool: true };
const LONG_MAX = 2n ** 63n - 1n;
const INT_MAX = 2n ** 31n - 1n;

/**
 * SelectorParser.jj of Apache RocketMQ 5.x, rule for rule, with the checks its expression
 * classes make while the tree is built (ComparisonExpression.checkLessThanOperand,
 * checkEqualOperand, createBetween, createInFilter, ConstantExpression.createFromDecimal and
 * createFloat). Precedence, loosest first: OR; AND; `=`, `<>`, IS [NOT] NULL; `>` `>=` `<` `<=`,
 * [NOT] BETWEEN / IN / CONTAINS / STARTSWITH / ENDSWITH; unary `+`, `-`, NOT (so `NOT a = 1`
 * is `(NOT a) = 1`). Like Java's start rule it stops at the first token that cannot continue the
 * expression, which must still be a valid token.
 */
export class SqlParser {
  private readonly ts: TokenStream;
  private nesting = 0;
  private readonly depth = new WeakMap<SqlNode, number>();
  /** Nodes of each subtree counted as evaluated: a node two parents share (BETWEEN's value) once per parent. */
  private readonly size = new WeakMap<SqlNode, number>();
  private created = 0;
  /** After parse(): the nodes of the tree as evaluated, which is the most steps one evaluation takes. */
  nodes = 0;

  /**
   * `maxNodes` bounds the tree (SqlLimitError naming `nodesOption`): checked as nodes are made, so
   * the parse stops where the count passes it.
   */
  constructor(
    private readonly src: string,
    private readonly maxNodes = Infinity,
    private readonly nodesOption = 'maxNodes',
  ) {
    this.ts = new TokenStream(src);
  }

  parse(): SqlNode {
    const first = this.ts.peek();
    const root = this.asBoolean(this.orExpression(), first);
    this.nodes = this.size.get(root) ?? 1;
    const next = this.ts.peek();
    this.ignoredFrom = next.kind === 'EOF' ? null : next.pos;
    return root;
  }

  /** After parse(): where the parser stopped short of the end (the first token it could not use), or null. */
  ignoredFrom: number | null = null;

  private fail(at: Token | number, reason: string): never {
    throw new SqlParseError(this.src, typeof at === 'number' ? at : at.pos, reason);
  }

  /**
   * Every node is made here, so the tree's depth and size are known and bounded. The size counts
   * a shared child once per parent (`v BETWEEN a AND b` evaluates v twice), so it is what an
   * evaluation can cost: nested BETWEENs would otherwise double it per level in a tree of a few
   * hundred nodes. Both the nodes made (the parser's work) and the size are held to maxNodes.
   */
  private node(n: SqlNode, at: Token, ...children: SqlNode[]): SqlNode {
    let d = 0;
    let size = 1;
    for (const c of children) {
      d = Math.max(d, this.depth.get(c) ?? 0);
      size += this.size.get(c) ?? 1;
    }
    if (d + 1 > MAX_SQL_TREE_DEPTH) this.fail(at, `expression deeper than ${MAX_SQL_TREE_DEPTH} operators`);
    this.created++;
    const count = Math.max(size, this.created);
    if (count > this.maxNodes)
      throw new SqlLimitError(this.src, at.pos, 'maxNodes', this.maxNodes, count, this.nodesOption);
    this.depth.set(n, d + 1);
    this.size.set(n, size);
    return n;
  }

  /** Java's asBooleanExpression: a BooleanExpression, or a property read as a Boolean. */
  private asBoolean(n: SqlNode, at: Token): SqlNode {
    if (isBooleanNode(n)) return n;
    if (n.k === 'prop') return this.node({ k: 'cast', e: n }, at, n);
    this.fail(at, 'expression will not result in a boolean value');
  }

  private orExpression(): SqlNode {
    const start = this.ts.peek();
    let left = this.andExpression();
    while (this.ts.peek().kind === 'OR') {
      const op = this.ts.consume();
      const rightStart = this.ts.peek();
      const right = this.andExpression();
      const l = this.asBoolean(left, start);
      const r = this.asBoolean(right, rightStart);
      left = this.node({ k: 'or', l, r }, op, l, r);
    }
    return left;
  }

  private andExpression(): SqlNode {
    const start = this.ts.peek();
    let left = this.equalityExpression();
    while (this.ts.peek().kind === 'AND') {
      const op = this.ts.consume();
      const rightStart = this.ts.peek();
      const right = this.equalityExpression();
      const l = this.asBoolean(left, start);
      const r = this.asBoolean(right, rightStart);
      left = this.node({ k: 'and', l, r }, op, l, r);
    }
    return left;
  }

  private equalityExpression(): SqlNode {
    let left = this.comparisonExpression();
    for (;;) {
      const t = this.ts.peek();
      if (t.kind === '=' || t.kind === '<>') {
        this.ts.consume();
        const right = this.comparisonExpression();
        left = this.createEqual(left, right, t);
        if (t.kind === '<>') left = this.node({ k: 'not', e: left }, t, left);
      } else if (t.kind === 'IS') {
        if (this.ts.peek(2).kind === 'NULL') {
          this.ts.consume();
          this.ts.consume();
          left = this.node({ k: 'eq', l: left, r: NULL_CONST }, t, left, NULL_CONST);
        } else {
          this.ts.consume();
          this.ts.expect('NOT');
          this.ts.expect('NULL');
          const eq = this.node({ k: 'eq', l: left, r: NULL_CONST }, t, left, NULL_CONST);
          left = this.node({ k: 'not', e: eq }, t, eq);
        }
      } else return left;
    }
  }

  private comparisonExpression(): SqlNode {
    let left = this.unaryExpr();
    for (;;) {
      const t = this.ts.peek();
      let not = false;
      let kind = t.kind;
      if (kind === 'NOT') {
        kind = this.ts.peek(2).kind;
        if (
          kind !== 'CONTAINS' &&
          kind !== 'STARTSWITH' &&
          kind !== 'ENDSWITH' &&
          kind !== 'BETWEEN' &&
          kind !== 'IN'
        ) {
          this.fail(
            t,
            `unexpected "NOT" after an operand, expecting NOT BETWEEN, NOT IN, NOT CONTAINS, NOT STARTSWITH or NOT ENDSWITH`,
          );
        }
        this.ts.consume();
        not = true;
      }
      switch (kind) {
        case '>':
        case '>=':
        case '<':
        case '<=': {
          this.ts.consume();
          const right = this.unaryExpr();
          left = this.createCompare(kind, left, right, t);
          break;
        }
        case 'CONTAINS':
        case 'STARTSWITH':
        case 'ENDSWITH': {
          this.ts.consume();
          const search = this.stringLiteral();
          left = this.node({ k: 'str', op: kind, not, e: left, search }, t, left);
          break;
        }
        case 'BETWEEN': {
          this.ts.consume();
          const low = this.unaryExpr();
          this.ts.expect('AND');
          const high = this.unaryExpr();
          left = not ? this.createNotBetween(left, low, high, t) : this.createBetween(left, low, high, t);
          break;
        }
        case 'IN': {
          this.ts.consume();
          this.ts.expect('(');
          const list = [this.stringLiteral()];
          while (this.ts.peek().kind === ',') {
            this.ts.consume();
            list.push(this.stringLiteral());
          }
          this.ts.expect(')');
          if (left.k !== 'prop') this.fail(t, `expected a property for ${not ? 'NOT IN' : 'IN'}`);
          left = this.node({ k: 'in', e: left, list: new Set(list), not }, t, left);
          break;
        }
        default:
          return left;
      }
    }
  }

  private unaryExpr(): SqlNode {
    const t = this.ts.peek();
    if (t.kind === '+' || t.kind === '-' || t.kind === 'NOT') {
      if (++this.nesting > MAX_SQL_NESTING) this.fail(t, `nested deeper than ${MAX_SQL_NESTING}`);
      this.ts.consume();
      const operandStart = this.ts.peek();
      const e = this.unaryExpr();
      this.nesting--;
      if (t.kind === '+') return e;
      if (t.kind === '-') return this.node({ k: 'neg', e }, t, e);
      const b = this.asBoolean(e, operandStart);
      return this.node({ k: 'not', e: b }, t, b);
    }
    return this.primaryExpr();
  }

  private primaryExpr(): SqlNode {
    const t = this.ts.peek();
    switch (t.kind) {
      case 'STRING':
        return this.node({ k: 'const', v: this.stringLiteral(), bool: false }, t);
      case 'DECIMAL':
        this.ts.consume();
        return this.node({ k: 'const', v: this.decimal(t), bool: false }, t);
      case 'FLOAT':
        this.ts.consume();
        return this.node({ k: 'const', v: this.float(t), bool: false }, t);
      case 'TRUE':
      case 'FALSE':
      case 'NULL':
        this.ts.consume();
        return this.node({ k: 'const', v: t.kind === 'NULL' ? null : t.kind === 'TRUE', bool: true }, t);
      case 'ID':
        this.ts.consume();
        return this.node({ k: 'prop', name: t.image }, t);
      case '(': {
        if (++this.nesting > MAX_SQL_NESTING) this.fail(t, `nested deeper than ${MAX_SQL_NESTING}`);
        this.ts.consume();
        const e = this.orExpression();
        this.ts.expect(')');
        this.nesting--;
        return e;
      }
      default:
        throw unexpected(this.src, t, 'a literal, a property name, "(", "+", "-" or NOT');
    }
  }

  private stringLiteral(): string {
    const t = this.ts.expect('STRING');
    return t.image.slice(1, -1).replace(/''/g, "'");
  }

  /** createFromDecimal: an optional L is dropped; Integer when it fits, else Long; beyond Long a NumberFormatException. */
  private decimal(t: Token): JavaValue {
    const text = /[lL]$/.test(t.image) ? t.image.slice(0, -1) : t.image;
    const v = BigInt(text);
    if (v > LONG_MAX) this.fail(t, `number ${t.image} is out of the range of a long`);
    return v <= INT_MAX ? jInt(Number(v)) : jLong(v);
  }

  /** createFloat: Double; refused above Double.MAX_VALUE and below Double.MIN_VALUE (4.9E-324, so 0.0 too). */
  private float(t: Token): JavaValue {
    const v = Number(t.image);
    if (v > Number.MAX_VALUE) this.fail(t, `${t.image} is greater than 1.7976931348623157E308`);
    if (v < Number.MIN_VALUE) this.fail(t, `${t.image} is less than 4.9E-324`);
    return jDouble(v);
  }

  private checkLessThanOperand(n: SqlNode, at: Token): void {
    if (n.k === 'const') {
      if (n.v !== null && typeof n.v === 'object') return;
      this.fail(at, `value ${javaValueText(n.v)} cannot be compared with ${at.image}`);
    }
    if (isBooleanNode(n)) this.fail(at, `a boolean expression cannot be compared with ${at.image}`);
  }

  private createCompare(op: '>' | '>=' | '<' | '<=', l: SqlNode, r: SqlNode, at: Token): SqlNode {
    this.checkLessThanOperand(l, at);
    this.checkLessThanOperand(r, at);
    return this.node({ k: 'cmp', op, l, r }, at, l, r);
  }

  private createEqual(l: SqlNode, r: SqlNode, at: Token): SqlNode {
    for (const n of [l, r]) {
      if (n.k === 'const' && n.v === null) this.fail(at, `NULL cannot be compared with ${at.image} (use IS NULL)`);
    }
    if (l.k === 'const' && r.k === 'const' && l.bool && !r.bool) {
      this.fail(at, `${javaValueText(l.v)} cannot be compared with ${javaValueText(r.v)}`);
    }
    return this.node({ k: 'eq', l, r }, at, l, r);
  }

  private createBetween(v: SqlNode, low: SqlNode, high: SqlNode, at: Token): SqlNode {
    if (low.k === 'const' && high.k === 'const') {
      if (low.v === null || high.v === null) this.fail(at, 'the values of BETWEEN cannot be NULL');
      let c: number;
      try {
        c = javaCompare(high.v, low.v);
      } catch (e) {
        if (!(e instanceof JavaEvalFailure)) throw e;
        this.fail(at, `the values of BETWEEN cannot be compared (${e.reason})`);
      }
      if (c < 0)
        this.fail(
          at,
          `the low value of BETWEEN (${javaValueText(low.v)}) must not be above the high value (${javaValueText(high.v)})`,
        );
    }
    const ge = this.createCompare('>=', v, low, at);
    const le = this.createCompare('<=', v, high, at);
    return this.node({ k: 'and', l: ge, r: le }, at, ge, le);
  }

  private createNotBetween(v: SqlNode, low: SqlNode, high: SqlNode, at: Token): SqlNode {
    const lt = this.createCompare('<', v, low, at);
    const gt = this.createCompare('>', v, high, at);
    return this.node({ k: 'or', l: lt, r: gt }, at, lt, gt);
  }
}
