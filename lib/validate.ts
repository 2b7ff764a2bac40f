import { GROUP_MAX_LENGTH, checkTopicName, isTopicOrGroupIllegal } from '../protocol/resource-names.js';

/**
 * The option validators of lib/: integers in a range, numbers, one of a list, booleans, strings,
 * group and topic names, alias options. Each throws the caller's own OptionError subclass
 * (`ProducerOptionError`, `BrokerOptionError`, …), made by the class or factory the validator was
 * built with, from the option's name and a message that says what the value must be and what it was:
 *
 *     const check = optionValidator(ProducerOptionError, { range: 'between' });
 *     check.intIn('compressLevel', options.compressLevel ?? 5, 0, 9);
 *     // ProducerOptionError "option compressLevel: must be an integer between 0 and 9, got 12"
 *
 * The wording options keep each folder's messages as they are (tests and users match them): how a
 * range is written, the sign of "at least", how a boolean is asked for.
 */

/** Makes the caller's error from the option's name and the message. */
export type OptionErrorFactory = (option: string, message: string) => Error;

/** An OptionError subclass whose constructor takes (option, message). */
export type OptionErrorClass = new (option: string, message: string) => Error;

/** How a validator words its messages. */
export interface Wording {
  /**
   * An integer range: `in [1, 10]` (brackets, the default), `between 1 and 10`, `in 1..10` (dots),
   * or separate: "must be an integer" for a value that is not one, "must be between 1 and 10" for
   * one out of range.
   */
  range?: 'brackets' | 'between' | 'dots' | 'separate';
  /** The sign of "at least": `>=` (the default) or `≥`; `non-negative` words an integer ≥ 0 so. */
  atLeast?: '>=' | '≥' | 'non-negative';
  /** What a boolean option must be: `a boolean` (the default) or `true or false`. */
  boolean?: 'a boolean' | 'true or false';
  /** How a wrong value is shown after "got": String(value) (the default) or JSON.stringify(value). */
  shown?: 'string' | 'json';
}

/** The messages of a group-name check, in the order of the checks. */
export interface GroupNameWording {
  /** Not a string, or empty. */
  missing: string;
  /** Only whitespace; without it such a name fails as illegal. */
  blank?: string;
  /** Longer than GROUP_MAX_LENGTH (Validators.checkGroup). */
  tooLong: string;
  /** A character outside `[%|a-zA-Z0-9_-]` (TopicValidator.isTopicOrGroupIllegal). */
  illegal: (group: string) => string;
  /** A name the client keeps for itself (DEFAULT_PRODUCER, DEFAULT_CONSUMER). */
  reserved?: { name: string; message: string };
}

/** The checks of one validator; each returns the value it checked, narrowed. */
export interface OptionValidator {
  /** The caller's error for `option` with `message` (to throw for a rule of its own). */
  error(option: string, message: string): Error;
  /** An integer in [min, max]. */
  intIn(option: string, value: unknown, min: number, max: number): number;
  /** An integer ≥ min (`minText` names the bound when it is another option). */
  intAtLeast(option: string, value: unknown, min: number, minText?: string): number;
  /** A safe integer ≥ min (below 2⁵³: counts and times kept as numbers). */
  safeIntAtLeast(option: string, value: unknown, min: number, minText?: string): number;
  /** A finite number ≥ min. */
  numberAtLeast(option: string, value: unknown, min: number): number;
  /** One of `allowed`: "must be A, B or C, got X". */
  oneOf<T>(option: string, value: unknown, allowed: readonly T[]): T;
  /** A boolean. */
  boolean(option: string, value: unknown): boolean;
  /** A non-empty string: "must be a non-empty string, got X". */
  nonEmptyString(option: string, value: unknown): string;
  /** A group name by Validators.checkGroup's rules, with the caller's messages. */
  groupName(option: string, value: unknown, wording: GroupNameWording): string;
  /** A topic name by TopicValidator's rules; the message is TopicValidator's remark. */
  topicName(option: string, value: unknown): string;
}

/** A validator throwing errors made by `error` (an OptionError subclass or a factory). */
export function optionValidator(error: OptionErrorClass | OptionErrorFactory, wording: Wording = {}): OptionValidator {
  const make: OptionErrorFactory = isClass(error)
    ? (option, message) => new error(option, message)
    : (error as OptionErrorFactory);
  const show = wording.shown === 'json' ? (v: unknown) => JSON.stringify(v) : (v: unknown) => String(v);
  const range = wording.range ?? 'brackets';
  const ge = wording.atLeast ?? '>=';
  const fail = (option: string, what: string, value: unknown): never => {
    throw make(option, `must be ${what}, got ${show(value)}`);
  };
  const atLeast = (safe: boolean) => (option: string, value: unknown, min: number, minText?: string) => {
    const ok = safe ? Number.isSafeInteger(value) : Number.isInteger(value);
    if (ok && (value as number) >= min) return value as number;
    if (ge === 'non-negative' && min === 0 && minText === undefined)
      return fail(option, 'a non-negative integer', value);
    return fail(option, `an integer ${ge === 'non-negative' ? '>=' : ge} ${minText ?? min}`, value);
  };
  return {
    error: make,
    intIn(option, value, min, max) {
      const integer = Number.isInteger(value);
      if (integer && (value as number) >= min && (value as number) <= max) return value as number;
      if (range !== 'separate') return fail(option, `an integer ${rangeText(range, min, max)}`, value);
      return fail(option, integer ? `between ${min} and ${max}` : 'an integer', value);
    },
    intAtLeast: atLeast(false),
    safeIntAtLeast: atLeast(true),
    numberAtLeast(option, value, min) {
      if (!Number.isFinite(value) || (value as number) < min)
        fail(option, `a number ${ge === 'non-negative' ? '>=' : ge} ${min}`, value);
      return value as number;
    },
    oneOf<T>(option: string, value: unknown, allowed: readonly T[]): T {
      if (!allowed.includes(value as T)) fail(option, listText(allowed.map(String)), value);
      return value as T;
    },
    boolean(option, value) {
      if (typeof value !== 'boolean') fail(option, wording.boolean ?? 'a boolean', value);
      return value as boolean;
    },
    nonEmptyString(option, value) {
      if (typeof value !== 'string' || value.length === 0) fail(option, 'a non-empty string', value);
      return value as string;
    },
    groupName(option, value, w) {
      if (typeof value !== 'string' || value.length === 0) throw make(option, w.missing);
      if (w.blank !== undefined && value.trim() === '') throw make(option, w.blank);
      if (value.length > GROUP_MAX_LENGTH) throw make(option, w.tooLong);
      if (isTopicOrGroupIllegal(value)) throw make(option, w.illegal(value));
      if (w.reserved && value === w.reserved.name) throw make(option, w.reserved.message);
      return value;
    },
    topicName(option, value) {
      const bad = checkTopicName(value);
      if (bad !== null) throw make(option, bad);
      return value as string;
    },
  };
}

/** `[1, 10]`, `between 1 and 10` or `1..10`, after "an integer". */
function rangeText(range: 'brackets' | 'between' | 'dots' | 'separate', min: number, max: number): string {
  if (range === 'between') return `between ${min} and ${max}`;
  if (range === 'dots') return `in ${min}..${max}`;
  return `in [${min}, ${max}]`;
}

/** "A", "A or B", "A, B or C". */
function listText(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function isClass(f: OptionErrorClass | OptionErrorFactory): f is OptionErrorClass {
  return f.prototype instanceof Error;
}

/**
 * An option with an alias (the group's `consumerGroup` / `producerGroup`, a duration's deprecated
 * Java name): the value under either name; both given and different is an error naming the alias.
 */
export function aliasOption(
  options: Record<string, unknown>,
  name: string,
  alias: string,
  error: OptionErrorFactory,
  differ: (value: unknown, aliasValue: unknown) => string,
): unknown {
  const v = options[name];
  const other = options[alias];
  if (v !== undefined && other !== undefined && v !== other) throw error(alias, differ(v, other));
  return v ?? other;
}
