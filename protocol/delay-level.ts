import { OptionError } from './errors.js';

/**
 * The broker's default `messageDelayLevel` table, 1-based: level L delays by DELAY_LEVELS_MS[L - 1].
 * A delayed message is parked in SCHEDULE_TOPIC_XXXX queue L - 1 (docs/protocol-facts.md#retry-dlq-and-delay-levels).
 */
export const DELAY_LEVEL_TEXT = '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Java's messageDelayLevel ("1s 5s ... 2h") → milliseconds per level (index 0 = level 1). */
export function parseDelayLevels(text: string = DELAY_LEVEL_TEXT): number[] {
  const out: number[] = [];
  // ''.split(/\s+/) is [''], which would be reported as `cannot parse ""`
  if (text.trim() === '') throw new OptionError('messageDelayLevel', 'messageDelayLevel is empty');
  for (const part of text.trim().split(/\s+/)) {
    const m = /^(\d+)(ms|s|m|h|d)$/.exec(part);
    if (!m) throw new OptionError('messageDelayLevel', `messageDelayLevel: cannot parse "${part}"`);
    out.push(Number(m[1]) * UNIT_MS[m[2]!]!);
  }
  return out;
}

/** The default table in milliseconds, frozen: index L - 1 is level L's delay (1000 … 7 200 000). */
export const DELAY_LEVELS_MS: readonly number[] = Object.freeze(parseDelayLevels(DELAY_LEVEL_TEXT));

/** The highest delay level of the default table: 18 (two hours). */
export const MAX_DELAY_LEVEL = DELAY_LEVELS_MS.length;

/** Topic in which delayed messages wait. */
export const SCHEDULE_TOPIC = 'SCHEDULE_TOPIC_XXXX';

/** Delay in ms of `level` (clamped to the maximum like the broker does); 0 for level <= 0. */
export function delayLevelMs(level: number): number {
  if (!(level > 0)) return 0;
  return DELAY_LEVELS_MS[Math.min(level, MAX_DELAY_LEVEL) - 1]!;
}
