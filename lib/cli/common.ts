import { parseArgs } from 'node:util';
import { RocketwireError } from '../../protocol/index.js';

/** Option declarations as node:util parseArgs takes them. */
export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean; default?: string | boolean }>;
/** Parsed option values. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** An error the CLI reports as one line (no stack) and an exit code. */
export class CliError extends RocketwireError {
  override readonly name: string = 'CliError';
  readonly exitCode: number;
  constructor(message: string, exitCode = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.exitCode = exitCode;
  }
}

/** Usage errors exit with 2. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super(message, 2);
  }
}

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

/** node:util parseArgs with strict checking, turning its errors into UsageError. */
export function parseOptions(
  argv: string[],
  options: OptionSpec,
  allowPositionals = false,
): { values: OptionValues; positionals: string[] } {
  try {
    const r = parseArgs({ args: argv, options, allowPositionals, strict: true });
    return { values: r.values as OptionValues, positionals: r.positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Parse an integer option value with a range, naming the option in the error. */
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

export function intOption(name: string, value: string | undefined, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return def;
  if (!/^-?\d+$/.test(value.trim())) throw new UsageError(`--${name} must be an integer, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}
