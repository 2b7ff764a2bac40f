/**
 * Private stand-ins for protocol's JSON helpers until protocol/ exports them: a parser that accepts
 * fastjson's non-standard map keys (unquoted numbers, objects used as keys, §8.5) and a writer in
 * fastjson's standard form (keys sorted, nulls omitted).
 */

class JsonSyntaxError extends SyntaxError {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
    this.offset = offset;
  }
}

/** Parses fastjson output. A key that is a number keeps its text; an object key becomes its JSON text. */
export function parseFastjsonLocal(text: string): unknown {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  };
  const fail = (what: string): never => {
    throw new JsonSyntaxError(what, i);
  };
  const str = (): string => {
    const start = i;
    i++;
    let escaped = false;
    while (i < text.length) {
      const c = text[i];
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') {
        i++;
        return JSON.parse(text.slice(start, i)) as string;
      }
      i++;
    }
    return fail('unterminated string');
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') return obj();
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return arr;
        } else fail('expected , or ]');
      }
    }
    if (c === '"') return str();
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) return fail('unexpected character');
    i += m[0].length;
    return JSON.parse(m[0]) as unknown;
  };
  const obj = (): Record<string, unknown> => {
    i++;
    const o: Record<string, unknown> = {};
    ws();
    if (text[i] === '}') {
      i++;
      return o;
    }
    for (;;) {
      ws();
      let key: string;
      const c = text[i];
      if (c === '"') key = str();
      else if (c === '{') key = JSON.stringify(obj());
      else {
        const m = /^-?\d+/.exec(text.slice(i, i + 30));
        if (!m) return fail('expected a key');
        key = m[0];
        i += m[0].length;
      }
      ws();
      if (text[i] !== ':') fail('expected :');
      i++;
      o[key] = value();
      ws();
      if (text[i] === ',') i++;
      else if (text[i] === '}') {
        i++;
        return o;
      } else fail('expected , or }');
    }
  };
  const v = value();
  ws();
  if (i !== text.length) fail('trailing characters');
  return v;
}

/** JSON with object keys sorted and null/undefined members omitted, as fastjson writes beans. */
export function toJavaJsonLocal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map((v) => toJavaJsonLocal(v)).join(',')}]`;
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(o).sort()) {
      const v = o[k];
      if (v === null || v === undefined) continue;
      parts.push(`${JSON.stringify(k)}:${toJavaJsonLocal(v)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value);
}
