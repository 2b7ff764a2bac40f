/**
 * The values a RocketMQ SQL92 expression computes with, as Java objects: Integer, Long, Double,
 * String, Boolean, or null (a missing property). Properties are always Strings; numbers come from
 * literals (an integer literal is an Integer when it fits in 32 bits, else a Long; a literal with
 * a point or an exponent is a Double) and from converting a String to the other side's type.
 */
export type JavaNumber = { t: 'i'; v: number } | { t: 'l'; v: bigint } | { t: 'd'; v: number };
export type JavaValue = null | boolean | string | JavaNumber;

/** A conversion Java throws on (NumberFormatException, ClassCastException): the whole evaluation fails. */
export class JavaEvalFailure {
  constructor(readonly reason: string) {}
}

export const jInt = (v: number): JavaNumber => ({ t: 'i', v });
export const jLong = (v: bigint): JavaNumber => ({ t: 'l', v });
export const jDouble = (v: number): JavaNumber => ({ t: 'd', v });

export function isJavaNumber(v: JavaValue): v is JavaNumber {
  return v !== null && typeof v === 'object';
}

type Cls = 'B' | 'S' | 'i' | 'l' | 'd';
function cls(v: Exclude<JavaValue, null>): Cls {
  return typeof v === 'boolean' ? 'B' : typeof v === 'string' ? 'S' : v.t;
}

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/**
 * Character.digit(c, 10) for one UTF-16 unit: ASCII digits, and the other Unicode decimal digits
 * of the BMP (Integer.parseInt takes "١٢" as 12). Each run of Nd characters starts at a zero.
 */
function javaDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c < 128 || !ND.test(String.fromCharCode(c))) return -1;
  let start = c;
  while (start > 0 && ND.test(String.fromCharCode(start - 1))) start--;
  return (c - start) % 10;
}
const ND = /^\p{Nd}$/u;

/** Integer.parseInt / Long.parseLong: an optional sign, then digits; no spaces; in range. */
function parseJavaInteger(s: string, min: bigint, max: bigint, what: string): bigint {
  const fail = (): never => {
    throw new JavaEvalFailure(`NumberFormatException: For input string: "${s}" (${what})`);
  };
  const n = s.length;
  if (n === 0) fail();
  let i = 0;
  let neg = false;
  const first = s.charCodeAt(0);
  if (first === 45 || first === 43) {
    if (n === 1) fail();
    neg = first === 45;
    i = 1;
  }
  let acc = 0n;
  for (; i < n; i++) {
    const d = javaDigit(s.charCodeAt(i));
    if (d < 0) fail();
    acc = acc * 10n + BigInt(d);
    if (acc > max + 1n) fail();
  }
  const v = neg ? -acc : acc;
  if (v < min || v > max) fail();
  return v;
}

// up to 9 ASCII digits always fit in an int: the common case, without BigInt
const SHORT_DECIMAL = /^[+-]?\d{1,9}$/;

export function parseJavaInt(s: string): JavaNumber {
  if (SHORT_DECIMAL.test(s)) return jInt(Number(s) | 0);
  return jInt(Number(parseJavaInteger(s, INT_MIN, INT_MAX, 'int')));
}
export function parseJavaLong(s: string): JavaNumber {
  if (SHORT_DECIMAL.test(s)) return jLong(BigInt(Number(s)));
  return jLong(parseJavaInteger(s, LONG_MIN, LONG_MAX, 'long'));
}

const DEC_FLOAT = /^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)$/;
const HEX_FLOAT = /^([+-])?0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)[fFdD]?$/;

/** String.trim: drop every char <= U+0020 at both ends. */
function javaTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 32) a++;
  while (b > a && s.charCodeAt(b - 1) <= 32) b--;
  return s.slice(a, b);
}

/**
 * Double.valueOf(String) (FloatingDecimal.readJavaFormatString): trimmed; a sign; NaN, Infinity,
 * a decimal with optional exponent, or a hexadecimal `0x1.8p3`; an optional f/F/d/D suffix.
 */
export function parseJavaDouble(raw: string): JavaNumber {
  const s = javaTrim(raw);
  if (DEC_FLOAT.test(s)) {
    const body = /[fFdD]$/.test(s) && !s.endsWith('Infinity') ? s.slice(0, -1) : s;
    return jDouble(Number(body));
  }
  const h = HEX_FLOAT.exec(s);
  if (h && (h[2]! + (h[3] ?? '')).length > 0) {
    const digits = h[2]! + (h[3] ?? '');
    // exact mantissa, scaled by 2^(exp - 4 per fraction digit); precise enough for filter
    // comparisons (a >53-bit mantissa is rounded twice)
    const mant = Number(BigInt('0x' + digits));
    const exp = Number(h[4]) - 4 * (h[3]?.length ?? 0);
    const half = Math.trunc(exp / 2);
    const v = mant * 2 ** half * 2 ** (exp - half);
    return jDouble(h[1] === '-' ? -v : v);
  }
  throw new JavaEvalFailure(`NumberFormatException: For input string: "${raw}" (double)`);
}

/** Double.compare: -0.0 < 0.0, NaN equals NaN and is above everything. */
function compareDouble(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) {
    if (a !== 0) return 0;
    const za = Object.is(a, -0);
    const zb = Object.is(b, -0);
    return za === zb ? 0 : za ? -1 : 1;
  }
  const na = Number.isNaN(a);
  const nb = Number.isNaN(b);
  return na === nb ? 0 : na ? 1 : -1;
}

function compareSame(a: Exclude<JavaValue, null>, b: Exclude<JavaValue, null>): number {
  if (typeof a === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (typeof a === 'string') {
    const bs = b as string;
    return a === bs ? 0 : a < bs ? -1 : 1; // String.compareTo: UTF-16 units, as JS compares
  }
  const bn = b as JavaNumber;
  if (a.t === 'd') return compareDouble(a.v, bn.v as number);
  const x = a.v as number | bigint;
  const y = bn.v as number | bigint;
  return x < y ? -1 : x > y ? 1 : 0;
}

const toDouble = (n: JavaNumber): JavaNumber => jDouble(Number(n.v));
const toLong = (n: JavaNumber): JavaNumber => jLong(BigInt(n.v));
const javaBoolean = (s: string): boolean => s.length === 4 && s.toLowerCase() === 'true';

/**
 * ComparisonExpression.__compare with convertStringExpressions on (SelectorParser.parse turns it
 * on for every expression it builds): values of two types are brought to one (Integer → Long →
 * Double; a String parsed as the other side's number or Boolean), then compareTo. A pair with no
 * conversion answers -1 (so `=` is false and `<` true); a String that does not parse fails the
 * evaluation, as does a Boolean on the left of a String (Java casts the Boolean to String).
 */
export function javaCompare(lv: Exclude<JavaValue, null>, rv: Exclude<JavaValue, null>): number {
  let a = lv;
  let b = rv;
  const lc = cls(a);
  const rc = cls(b);
  if (lc !== rc) {
    switch (lc) {
      case 'B':
        if (rc === 'S') throw new JavaEvalFailure('ClassCastException: Boolean cannot be cast to String');
        return -1;
      case 'i':
        if (rc === 'l') a = toLong(a as JavaNumber);
        else if (rc === 'd') a = toDouble(a as JavaNumber);
        else if (rc === 'S') b = parseJavaInt(b as string);
        else return -1;
        break;
      case 'l':
        if (rc === 'i') b = toLong(b as JavaNumber);
        else if (rc === 'd') a = toDouble(a as JavaNumber);
        else if (rc === 'S') b = parseJavaLong(b as string);
        else return -1;
        break;
      case 'd':
        if (rc === 'i' || rc === 'l') b = toDouble(b as JavaNumber);
        else if (rc === 'S') b = parseJavaDouble(b as string);
        else return -1;
        break;
      case 'S': {
        const s = a as string;
        if (rc === 'B') a = javaBoolean(s);
        else if (rc === 'i') a = parseJavaInt(s);
        else if (rc === 'l') a = parseJavaLong(s);
        else if (rc === 'd') a = parseJavaDouble(s);
        else return -1;
        break;
      }
    }
  }
  return compareSame(a, b);
}

/** Object.equals between two values of the expression (Integer 1 is not Long 1). */
export function javaEquals(a: Exclude<JavaValue, null>, b: Exclude<JavaValue, null>): boolean {
  const ca = cls(a);
  if (ca !== cls(b)) return false;
  if (ca === 'd') return compareDouble((a as JavaNumber).v as number, (b as JavaNumber).v as number) === 0;
  return compareSame(a, b) === 0;
}

/** How ConstantExpression.toString shows a literal in an error. */
export function javaValueText(v: JavaValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return `'${v.replace(/'/g, "''")}'`;
  if (v.t === 'd') return Number.isInteger(v.v) && Math.abs(v.v) < 1e7 ? v.v.toFixed(1) : String(v.v);
  return String(v.v);
}
