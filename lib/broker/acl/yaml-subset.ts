import { YamlSubsetError } from './errors.js';

/**
 * A reader for the part of YAML that plain_acl.yml files use, so that the broker needs no YAML
 * dependency. It reads:
 *
 * * block mappings (`key: value`, `key:` followed by a more indented block, or by a block sequence
 *   at the key's own indentation), block sequences (`- item`, `- key: value` starting a mapping,
 *   `-` followed by a more indented block), to any depth, indented with spaces;
 * * scalars: plain, 'single-quoted' (`''` is a quote), "double-quoted" (`\"`, `\\`, `\n`, `\t`,
 *   `\uXXXX`), and flow sequences of scalars (`[a=PUB, "b=SUB"]`, `[]`), `{}`;
 * * comments (`#` at the start of a line or after a space), blank lines, a leading `---`.
 *
 * Plain `true` / `false` (any case) are booleans, `null`, `~` and nothing are null; every other
 * scalar is a string, numbers included (`secretKey: 12345678` is the string "12345678", which is
 * what Apache ends up with too; write keys such as `0123` in quotes, since SnakeYAML reads them as octal).
 * Anything else (anchors, aliases, tags, `|` / `>` blocks, flow mappings with content, multi-line
 * plain scalars, tabs in indentation) is refused with its line number rather than misread.
 */
export type YamlValue = string | boolean | null | YamlValue[] | { [key: string]: YamlValue };

interface Line {
  no: number;
  indent: number;
  text: string;
}

/** Strip a comment that is not inside quotes. */
function stripComment(s: string): string {
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      if (i === 0 || /[\s:[,-]/.test(s[i - 1]!)) quote = c;
    } else if (c === '#' && (i === 0 || s[i - 1] === ' ' || s[i - 1] === '\t')) {
      return s.slice(0, i);
    }
  }
  return s;
}

function lines(text: string): Line[] {
  const out: Line[] = [];
  const raw = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < raw.length; i++) {
    const no = i + 1;
    const body = stripComment(raw[i]!).replace(/\s+$/, '');
    if (body.trim() === '') continue;
    const indent = body.length - body.replace(/^ +/, '').length;
    if (body[indent] === '\t') throw new YamlSubsetError(no, 'tabs are not allowed in indentation');
    if (out.length === 0 && body.trim() === '---') continue;
    if (body.trim() === '...' || body.trim() === '---') throw new YamlSubsetError(no, 'only one document is supported');
    out.push({ no, indent, text: body.slice(indent) });
  }
  return out;
}

function scalar(s: string, no: number): YamlValue {
  const t = s.trim();
  if (t === '' || t === '~' || t === 'null' || t === 'Null' || t === 'NULL') return null;
  if (/^(true|false)$/i.test(t)) return t.toLowerCase() === 'true';
  const c = t[0]!;
  if (c === "'") {
    if (!t.endsWith("'") || t.length < 2) throw new YamlSubsetError(no, 'unterminated single-quoted string');
    return t.slice(1, -1).replace(/''/g, "'");
  }
  if (c === '"') {
    if (!t.endsWith('"') || t.length < 2) throw new YamlSubsetError(no, 'unterminated double-quoted string');
    try {
      return JSON.parse(t) as string;
    } catch {
      throw new YamlSubsetError(no, 'a double-quoted string with an escape JSON does not know');
    }
  }
  if (c === '[') {
    if (!t.endsWith(']')) throw new YamlSubsetError(no, 'a flow sequence must end on its line');
    const inner = t.slice(1, -1).trim();
    if (inner === '') return [];
    return splitFlow(inner, no).map((p) => {
      const v = scalar(p, no);
      if (typeof v === 'object' && v !== null)
        throw new YamlSubsetError(no, 'nested flow collections are not supported');
      return v;
    });
  }
  if (c === '{') {
    if (t.replace(/\s+/g, '') === '{}') return {};
    throw new YamlSubsetError(no, 'flow mappings are not supported; write the mapping as a block');
  }
  // "*" and "*.*.*.*" are white addresses (YAML would take them for aliases; Apache's files quote them or not)
  if (c === '*' ? !/^\*[*.:0-9a-fA-F{},-]*$/.test(t) : '&!|>@`%'.includes(c)) {
    throw new YamlSubsetError(no, `${JSON.stringify(c)} (anchors, aliases, tags, block scalars) is not supported`);
  }
  return t;
}

function splitFlow(s: string, no: number): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[' || ch === '{') throw new YamlSubsetError(no, 'nested flow collections are not supported');
    else if (ch === ',') {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  if (quote) throw new YamlSubsetError(no, 'unterminated string in a flow sequence');
  const last = s.slice(start);
  if (last.trim() !== '') out.push(last);
  return out;
}

/** `key: rest` → [key, rest], or null when the text is not a mapping entry. */
function splitKey(text: string, no: number): [string, string] | null {
  const q = text[0];
  if (q === '"' || q === "'") {
    const end = text.indexOf(q, 1);
    if (end < 0 || text[end + 1] !== ':' || (end + 2 < text.length && text[end + 2] !== ' ')) return null;
    return [scalar(text.slice(0, end + 1), no) as string, text.slice(end + 2).trim()];
  }
  // the first ':' followed by a space or the line's end ends the key ("::1" is a value, not a key)
  for (let i = 0; i < text.length; i++) {
    if (text[i] === ':' && (i + 1 === text.length || text[i + 1] === ' ')) {
      const key = text.slice(0, i).trim();
      if (key === '' || /^[[\]{},&*!|>%@`]/.test(key)) return null;
      return [key, text.slice(i + 1).trim()];
    }
  }
  return null;
}

class Reader {
  i = 0;
  constructor(private readonly ls: Line[]) {}

  peek(): Line | undefined {
    return this.ls[this.i];
  }

  /** The block starting at the current line, whose indentation is `indent`. */
  block(indent: number): YamlValue {
    const l = this.peek()!;
    if (isSeqItem(l.text)) return this.sequence(indent);
    if (splitKey(l.text, l.no)) return this.mapping(indent);
    this.i++;
    const v = scalar(l.text, l.no);
    const next = this.peek();
    if (next && next.indent >= indent && next.indent > 0 && !isSeqItem(next.text) && !splitKey(next.text, next.no)) {
      throw new YamlSubsetError(next.no, 'multi-line plain scalars are not supported; write the value on one line');
    }
    return v;
  }

  sequence(indent: number): YamlValue[] {
    const out: YamlValue[] = [];
    for (let l = this.peek(); l && l.indent === indent && isSeqItem(l.text); l = this.peek()) {
      const rest = l.text.slice(1);
      if (rest.trim() === '') {
        this.i++;
        const next = this.peek();
        out.push(next && next.indent > indent ? this.block(next.indent) : null);
        continue;
      }
      // "- key: value" starts a mapping whose keys sit at the column after "- "
      const col = indent + 1 + (rest.length - rest.trimStart().length);
      const inner = rest.trimStart();
      this.ls[this.i] = { no: l.no, indent: col, text: inner };
      if (isSeqItem(inner)) out.push(this.sequence(col));
      else if (splitKey(inner, l.no)) out.push(this.mapping(col));
      else {
        this.i++;
        out.push(scalar(inner, l.no));
      }
    }
    const l = this.peek();
    if (l && l.indent > indent) throw new YamlSubsetError(l.no, 'unexpected indentation');
    return out;
  }

  mapping(indent: number): { [key: string]: YamlValue } {
    const out: { [key: string]: YamlValue } = {};
    for (let l = this.peek(); l && l.indent === indent; l = this.peek()) {
      if (isSeqItem(l.text)) throw new YamlSubsetError(l.no, 'a sequence item where a mapping key was expected');
      const kv = splitKey(l.text, l.no);
      if (!kv) throw new YamlSubsetError(l.no, 'expected "key: value"');
      const [key, rest] = kv;
      if (Object.hasOwn(out, key)) throw new YamlSubsetError(l.no, `duplicate key ${JSON.stringify(key)}`);
      this.i++;
      let value: YamlValue;
      if (rest !== '') value = scalar(rest, l.no);
      else {
        const next = this.peek();
        if (next && next.indent > indent) value = this.block(next.indent);
        else if (next && next.indent === indent && isSeqItem(next.text)) value = this.sequence(indent);
        else value = null;
      }
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    const l = this.peek();
    if (l && l.indent > indent) throw new YamlSubsetError(l.no, 'unexpected indentation');
    return out;
  }
}

function isSeqItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

/** Parse a document of the subset above; an empty document is null. */
export function parseYamlSubset(text: string): YamlValue {
  const ls = lines(text);
  if (ls.length === 0) return null;
  const r = new Reader(ls);
  const v = r.block(ls[0]!.indent);
  const rest = r.peek();
  if (rest) throw new YamlSubsetError(rest.no, 'unexpected content after the document');
  return v;
}
