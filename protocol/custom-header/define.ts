import { HeaderFieldError } from '../errors.js';

/**
 * Typed custom headers (CommandCustomHeader in Java): a flat record whose fields travel as
 * `extFields` strings. Decoding parses like Java does (Integer.parseInt, Long.parseLong:
 * optional sign, decimal digits, nothing else; Boolean.parseBoolean: "true" in any case) and,
 * unlike Java which logs and carries on, rejects a missing required field or an unparsable number
 * with a HeaderFieldError naming the key. Unknown keys (bname, ns, lo, …) are ignored.
 */
export type FieldKind = 'string' | 'int' | 'long' | 'boolean' | 'double';

export interface FieldDef<V, R extends boolean> {
  readonly kind: FieldKind;
  readonly required: R;
  /** extFields key; defaults to the property name. */
  readonly key: string | undefined;
  /** Type carrier only. */
  readonly _value?: V;
}

type KindValue = { string: string; int: number; long: number; boolean: boolean; double: number };

function field<K extends FieldKind>(kind: K) {
  return {
    required: (key?: string): FieldDef<KindValue[K], true> => ({ kind, required: true, key }),
    optional: (key?: string): FieldDef<KindValue[K], false> => ({ kind, required: false, key }),
  };
}
/** Field builders: `F.long.required()`, `F.string.optional('n')`, … */
export const F = {
  string: field('string'),
  int: field('int'),
  long: field('long'),
  boolean: field('boolean'),
  double: field('double'),
};

type AnyDef = FieldDef<unknown, boolean>;
type Spec = Record<string, AnyDef>;
type RequiredKeys<S extends Spec> = { [K in keyof S]: S[K] extends FieldDef<unknown, true> ? K : never }[keyof S];
type OptionalKeys<S extends Spec> = Exclude<keyof S, RequiredKeys<S>>;
type ValueOf<D> = D extends FieldDef<infer V, boolean> ? V : never;
type Simplify<T> = { [K in keyof T]: T[K] };

/** The field record described by a spec. */
export type HeaderOf<S extends Spec> = Simplify<
  { [K in RequiredKeys<S>]: ValueOf<S[K]> } & { [K in OptionalKeys<S>]?: ValueOf<S[K]> | undefined }
>;

/** One field of a header as its spec declares it. */
export interface HeaderFieldSpec {
  readonly name: string;
  readonly key: string;
  readonly kind: FieldKind;
  readonly required: boolean;
}

/**
 * The codec of one typed header: its Java class name, its fields with their `extFields` keys, and
 * encode/decode between the field record `T` and `extFields` strings. Decoding parses numbers as
 * Java does and throws a HeaderFieldError for a missing required field or an unparsable number.
 */
export interface HeaderCodec<T> {
  /** Java class name, for error messages and documentation. */
  readonly name: string;
  /** The `extFields` keys by field name. */
  readonly keys: Readonly<Record<keyof T & string, string>>;
  /** The fields in spec order (the order encode writes them in). */
  readonly fields: readonly HeaderFieldSpec[];
  /** Fields to `extFields` strings; undefined/null optional fields are left out. */
  encode(fields: T): Record<string, string>;
  /** `extFields` to fields, validating as described above. */
  decode(extFields: Readonly<Record<string, string>> | null | undefined): T;
}

/** Fields (string | number | boolean) of any header, for code that handles headers generically. */
export type HeaderFields<C> = C extends HeaderCodec<infer T> ? T : never;

const INT_RE = /^[+-]?\d+$/;

function parseIntField(key: string, v: string): number {
  if (!INT_RE.test(v)) throw new HeaderFieldError(key, `not an int: ${JSON.stringify(v)}`);
  const n = Number(v);
  if (n < -2147483648 || n > 2147483647) throw new HeaderFieldError(key, `out of int range: ${v}`);
  return n;
}
function parseLongField(key: string, v: string): number {
  if (!INT_RE.test(v)) throw new HeaderFieldError(key, `not a long: ${JSON.stringify(v)}`);
  const n = Number(v);
  // Narrowing point: header longs are offsets, timestamps and ids that stay below 2^53; a larger
  // value cannot be represented exactly as a number, so it is refused rather than rounded.
  if (!Number.isSafeInteger(n)) throw new HeaderFieldError(key, `long ${v} does not fit in 53 bits`);
  return n;
}
function parseDoubleField(key: string, v: string): number {
  const n = Number(v);
  if (v.trim() !== v || v === '' || (Number.isNaN(n) && v !== 'NaN'))
    throw new HeaderFieldError(key, `not a double: ${JSON.stringify(v)}`);
  return n;
}

function encodeValue(key: string, kind: FieldKind, v: unknown): string {
  switch (kind) {
    case 'string':
      if (typeof v !== 'string') throw new HeaderFieldError(key, `expected a string, got ${typeof v}`);
      return v;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
        throw new HeaderFieldError(key, `expected an int, got ${String(v)}`);
      }
      return String(v);
    case 'long':
      if (typeof v !== 'number' || !Number.isSafeInteger(v))
        throw new HeaderFieldError(key, `expected a long, got ${String(v)}`);
      return String(v);
    case 'boolean':
      if (typeof v !== 'boolean') throw new HeaderFieldError(key, `expected a boolean, got ${String(v)}`);
      return v ? 'true' : 'false';
    case 'double':
      if (typeof v !== 'number') throw new HeaderFieldError(key, `expected a number, got ${String(v)}`);
      return String(v);
  }
}

function decodeValue(key: string, kind: FieldKind, v: string): string | number | boolean {
  switch (kind) {
    case 'string':
      return v;
    case 'int':
      return parseIntField(key, v);
    case 'long':
      return parseLongField(key, v);
    case 'boolean':
      return v.length === 4 && v.toLowerCase() === 'true';
    case 'double':
      return parseDoubleField(key, v);
  }
}

/** The same spec with every field under the `extFields` key `keys` gives it (SEND_MESSAGE_V2's a..n). */
export function rekey<S extends Spec>(spec: S, keys: { readonly [K in keyof S]: string }): S {
  const out: Record<string, AnyDef> = {};
  for (const name of Object.keys(spec)) out[name] = { ...spec[name]!, key: keys[name as keyof S] };
  return out as S;
}

/** Build the codec of one header class from its field spec. */
export function defineHeader<S extends Spec>(name: string, spec: S): HeaderCodec<HeaderOf<S>> {
  const names = Object.keys(spec);
  const entries: readonly HeaderFieldSpec[] = Object.freeze(
    names.map((n) => {
      const d = spec[n]!;
      return Object.freeze({ name: n, key: d.key ?? n, kind: d.kind, required: d.required });
    }),
  );
  const keys: Record<string, string> = {};
  for (const e of entries) keys[e.name] = e.key;
  return {
    name,
    keys: keys as Record<keyof HeaderOf<S> & string, string>,
    fields: entries,
    encode(fields: HeaderOf<S>): Record<string, string> {
      const out: Record<string, string> = {};
      const f = fields as Record<string, unknown>;
      for (const e of entries) {
        const v = f[e.name];
        if (v == null) {
          if (e.required) throw new HeaderFieldError(e.key, `${name}.${e.name} is required`);
          continue;
        }
        out[e.key] = encodeValue(e.key, e.kind, v);
      }
      return out;
    },
    decode(ext: Readonly<Record<string, string>> | null | undefined): HeaderOf<S> {
      const out: Record<string, unknown> = {};
      for (const e of entries) {
        const v = ext == null ? undefined : ext[e.key];
        if (v == null) {
          if (e.required) throw new HeaderFieldError(e.key, `missing in ${name}`);
          continue;
        }
        out[e.name] = decodeValue(e.key, e.kind, v);
      }
      return out as HeaderOf<S>;
    },
  };
}
