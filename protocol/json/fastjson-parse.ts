import { ProtocolError } from '../errors.js';
import { putOwn } from '../own-key.js';
import { toJavaJson } from './java-json.js';

/**
 * A JSON reader tolerant of what fastjson writes (docs/protocol-facts.md#non-standard-json-from-fastjson):
 *  - map keys that are numbers, unquoted: `{0:"addr",1:"addr"}` → key "0", "1";
 *  - map keys that are objects: `{{"brokerName":"b","queueId":0,"topic":"T"}:100}` → the key is the
 *    canonical JSON text of that object (sorted keys, see toJavaJson), so it can be parsed back;
 *  - bare identifier keys, single-quoted strings and trailing commas (fastjson accepts them too).
 * Standard JSON goes through JSON.parse first; only text that fails there is re-read by hand.
 * Errors are ProtocolErrors whose offset is the character position.
 */
export function parseFastjson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return new TolerantParser(text).parseDocument();
  }
}

/** Nesting deeper than this is refused (a ProtocolError, not a stack overflow). */
const MAX_DEPTH = 512;

class TolerantParser {
  private p = 0;
  private depth = 0;
  constructor(private readonly s: string) {}

  parseDocument(): unknown {
    const v = this.value();
    this.ws();
    if (this.p < this.s.length) this.fail('unexpected text after the value');
    return v;
  }

  private fail(msg: string): never {
    throw new ProtocolError(`JSON body: ${msg} at character ${this.p}`, this.p);
  }

  private ws(): void {
    const s = this.s;
    while (this.p < s.length) {
      const c = s.charCodeAt(this.p);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.p++;
      else break;
    }
  }

  private value(): unknown {
    this.ws();
    const c = this.s[this.p];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
      case "'":
        return this.string();
      case 't':
        return this.word('true', true);
      case 'f':
        return this.word('false', false);
      case 'n':
        return this.word('null', null);
      case undefined:
        return this.fail('unexpected end of input');
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.number();
        return this.fail(`unexpected character ${JSON.stringify(c)}`);
    }
  }

  private word<T>(w: string, v: T): T {
    if (!this.s.startsWith(w, this.p)) this.fail(`expected ${w}`);
    this.p += w.length;
    return v;
  }

  private number(): number {
    const re = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    re.lastIndex = this.p;
    const m = re.exec(this.s);
    if (!m) this.fail('bad number');
    this.p += m[0].length;
    // fastjson may suffix longs/floats with L/F/D when WriteClassName is on; skip one such letter.
    const n = this.s[this.p];
    if (n === 'L' || n === 'F' || n === 'D' || n === 'S' || n === 'B') this.p++;
    return Number(m[0]);
  }

  private string(): string {
    const s = this.s;
    const quote = s[this.p]!;
    this.p++;
    let out = '';
    let start = this.p;
    for (;;) {
      if (this.p >= s.length) this.fail('unterminated string');
      const c = s[this.p]!;
      if (c === quote) {
        out += s.slice(start, this.p);
        this.p++;
        return out;
      }
      if (c === '\\') {
        out += s.slice(start, this.p);
        const e = s[this.p + 1];
        this.p += 2;
        switch (e) {
          case '"':
            out += '"';
            break;
          case "'":
            out += "'";
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            const h = s.slice(this.p, this.p + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail('bad \\u escape');
            out += String.fromCharCode(parseInt(h, 16));
            this.p += 4;
            break;
          }
          case 'x': {
            const h = s.slice(this.p, this.p + 2);
            if (!/^[0-9a-fA-F]{2}$/.test(h)) this.fail('bad \\x escape');
            out += String.fromCharCode(parseInt(h, 16));
            this.p += 2;
            break;
          }
          default:
            this.fail('bad escape');
        }
        start = this.p;
        continue;
      }
      this.p++;
    }
  }

  private key(): string {
    this.ws();
    const c = this.s[this.p];
    if (c === '"' || c === "'") return this.string();
    if (c === '{' || c === '[') {
      // An object (or array) used as a map key: keep its canonical text so equal keys compare equal.
      return toJavaJson(c === '{' ? this.object() : this.array());
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      const start = this.p;
      this.number();
      return this.s.slice(start, this.p).replace(/[LFDSB]$/, '');
    }
    const re = /[A-Za-z_$][\w$]*/y;
    re.lastIndex = this.p;
    const m = re.exec(this.s);
    if (!m) this.fail('expected a key');
    this.p += m[0].length;
    return m[0];
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
  }

  private object(): Record<string, unknown> {
    this.enter();
    const r = this.objectBody();
    this.depth--;
    return r;
  }

  private array(): unknown[] {
    this.enter();
    const r = this.arrayBody();
    this.depth--;
    return r;
  }

  private objectBody(): Record<string, unknown> {
    this.p++; // {
    const out: Record<string, unknown> = {};
    this.ws();
    if (this.s[this.p] === '}') {
      this.p++;
      return out;
    }
    for (;;) {
      const k = this.key();
      this.ws();
      if (this.s[this.p] !== ':') this.fail('expected ":"');
      this.p++;
      const v = this.value();
      putOwn(out, k, v);
      this.ws();
      const c = this.s[this.p];
      if (c === ',') {
        this.p++;
        this.ws();
        if (this.s[this.p] === '}') {
          this.p++;
          return out;
        }
        continue;
      }
      if (c === '}') {
        this.p++;
        return out;
      }
      this.fail('expected "," or "}"');
    }
  }

  private arrayBody(): unknown[] {
    this.p++; // [
    const out: unknown[] = [];
    this.ws();
    if (this.s[this.p] === ']') {
      this.p++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.s[this.p];
      if (c === ',') {
        this.p++;
        this.ws();
        if (this.s[this.p] === ']') {
          this.p++;
          return out;
        }
        continue;
      }
      if (c === ']') {
        this.p++;
        return out;
      }
      this.fail('expected "," or "]"');
    }
  }
}

/** parseFastjson for a body Buffer (UTF-8). */
export function parseFastjsonBody(body: Buffer | Uint8Array | null | undefined): unknown {
  if (body == null || body.length === 0) throw new ProtocolError('JSON body: empty', 0);
  return parseFastjson(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8'));
}
