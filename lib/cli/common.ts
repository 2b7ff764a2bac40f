import { parseArgs } from 'node:util';
import { didYouMean } from './did-you-mean.js';
import { UsageError } from './errors.js';

export { CliError, UsageError } from './errors.js';

/** Option declarations as node:util parseArgs takes them. */
export type OptionSpec = Record<
  string,
  { type: 'string' | 'boolean'; short?: string; multiple?: boolean; default?: string | boolean }
>;
/** Parsed option values. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** Streams a command writes to; tests pass their own. */
export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export interface CliCommand {
  /** One line for `rocketwire help`. */
  summary: string;
  /** The full usage text. */
  usage: string;
  /** Runs the command; resolves to the exit code. Throw CliError for a one-line failure. */
  run(argv: string[], io: CliIO): Promise<number>;
}

/** A value that starts with a dash but is a number ("-1", "-5", "-0.5"), not an option. */
const NEGATIVE_NUMBER = /^-(\d|\.\d)/;

/**
 * The short flags of the options most commands share, given to every command that has the long
 * one: `-n` as mqadmin's name server flag, `-t` topic, `-g` group, `-c` count. No command declares
 * short flags of its own, so they cannot collide.
 */
const SHORT_FLAGS: Readonly<Record<string, string>> = { namesrv: 'n', topic: 't', group: 'g', count: 'c' };

function withShortFlags(options: OptionSpec): OptionSpec {
  const taken = new Set(Object.values(options).map((o) => o.short));
  const out: OptionSpec = {};
  for (const [name, o] of Object.entries(options)) {
    const short = SHORT_FLAGS[name];
    out[name] = o.short === undefined && short !== undefined && !taken.has(short) ? { ...o, short } : o;
  }
  return out;
}

/** The long name an argument names: "--count=3" → "count", "-c" → "count" (given the spec). */
function longName(arg: string, options: OptionSpec): string | undefined {
  if (arg.startsWith('--')) return arg.slice(2).split('=')[0];
  if (/^-[^-]$/.test(arg)) return Object.entries(options).find(([, o]) => o.short === arg[1])?.[0];
  return undefined;
}

/**
 * `--count -1` as parseArgs would read `--count=-1`. parseArgs refuses a value that starts with a
 * dash ("argument is ambiguous"), so a negative number never reached the option's range check and
 * the user was not told what the valid range is. Only string options followed by something that
 * reads as a negative number are joined; `--body -x` still gets parseArgs's advice to write `--body=-x`.
 */
function joinNegativeValues(argv: string[], options: OptionSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    const name = a.includes('=') ? undefined : longName(a, options);
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(a);
    }
  }
  return out;
}

/**
 * A one-line UsageError for an option the command does not have, with the nearest one it does
 * ("unknown option --cuont: did you mean --count?"). A single-dash long name (`-topic`, mqadmin's
 * habit for some flags) is caught before parseArgs reads it as `-t opic`.
 */
function unknownOption(arg: string, options: OptionSpec): UsageError {
  const names = Object.keys(options);
  const word = arg.replace(/^-+/, '').split('=')[0]!;
  const guess = names.includes(word) ? word : arg.startsWith('--') ? didYouMean(word, names) : undefined;
  return new UsageError(
    `unknown option ${arg.split('=')[0]}${guess !== undefined ? `: did you mean --${guess}?` : ' (--help lists the options)'}`,
  );
}

function singleDashLongName(argv: string[], options: OptionSpec): string | undefined {
  for (const a of argv) {
    if (a === '--') return undefined;
    if (/^-[a-z][a-z-]+(=|$)/.test(a) && Object.hasOwn(options, a.slice(1).split('=')[0]!)) return a;
  }
  return undefined;
}

/** node:util parseArgs with strict checking, turning its errors into UsageError. */
export function parseOptions(
  argv: string[],
  options: OptionSpec,
  allowPositionals = false,
): { values: OptionValues; positionals: string[] } {
  const spec = withShortFlags(options);
  const dashed = singleDashLongName(argv, spec);
  if (dashed !== undefined) throw unknownOption(dashed, spec);
  try {
    const r = parseArgs({ args: joinNegativeValues(argv, spec), options: spec, allowPositionals, strict: true });
    return { values: r.values as OptionValues, positionals: r.positionals };
  } catch (err) {
    const e = err as Error & { code?: string };
    const unknown = e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']+)'/.exec(e.message) : null;
    if (unknown) throw unknownOption(unknown[1]!, spec);
    throw new UsageError(e.message);
  }
}

/** Where `--namesrv` comes from when it is not given, in this order (mqadmin's, then the examples'). */
export const NAMESRV_ENV = ['NAMESRV_ADDR', 'ROCKETWIRE_NAMESRV'] as const;

/**
 * The name server(s): `--namesrv`/`-n`, else `NAMESRV_ADDR` (what mqadmin and Java's ClientConfig
 * read), else `ROCKETWIRE_NAMESRV` (what the examples read). An empty variable counts as unset.
 */
export function namesrvOption(values: OptionValues, env: NodeJS.ProcessEnv = process.env): string {
  const given = stringOption(values, 'namesrv');
  if (given !== undefined) {
    if (!given) throw new UsageError('--namesrv must not be empty');
    return given;
  }
  for (const name of NAMESRV_ENV) {
    const v = env[name]?.trim();
    if (v) return v;
  }
  throw new UsageError(`--namesrv is required (or set ${NAMESRV_ENV.join(' or ')})`);
}

/** The value of string option `name`, or undefined when it was not given. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** The value of string option `name`, which must be given and not empty (else a UsageError). */
export function requiredOption(values: OptionValues, name: string): string {
  const v = stringOption(values, name);
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

/** "an integer from 1 to 65535", or "an integer of at least 1" when there is no practical maximum. */
function rangeText(min: number, max: number): string {
  return max >= Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
}

/**
 * Parse an integer option value with a range, naming the option and the range in the error (the
 * value is echoed as given: a number beyond 2^53 printed as a double would not be what was typed).
 */
export function intOption(
  name: string,
  value: string | undefined,
  def: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return def;
  const text = value.trim();
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`--${name} must be ${rangeText(min, max)}, got "${value}"`);
  const n = Number(text);
  if (n < min || n > max) throw new UsageError(`--${name} must be ${rangeText(min, max)}, got ${text}`);
  return n;
}

/**
 * Write rows as a table: columns padded to their widest cell, two spaces apart, trailing blanks
 * trimmed (the layout of `rocketwire offsets` and every `rocketwire admin` table).
 */
export function printTable(out: NodeJS.WritableStream, header: string[], rows: string[][]): void {
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)));
  for (const row of table)
    out.write(
      row
        .map((c, i) => (c ?? '').padEnd(widths[i]!))
        .join('  ')
        .trimEnd() + '\n',
    );
}

/** The first line of an error's message: what a CLI prints about it. */
export function oneLine(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  return m.split('\n')[0] ?? m;
}

/**
 * Ctrl-C / SIGTERM while a command works: `signal` aborts on the first one (the command stops what
 * it issues and finishes what is in flight); dispose() removes the listeners.
 */
export function onInterrupt(): { readonly signal: AbortSignal; dispose(): void } {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
