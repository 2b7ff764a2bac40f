import { BrokerOptionError } from '../errors.js';
import { optionValidator } from '../../validate.js';

/**
 * Bounds of a POP's invisibleTime (minPopInvisibleTimeMs / maxPopInvisibleTimeMs). Apache's broker
 * checks none (its proxy: 10 s – 12 h for a receive); the Java client pops with 5 s – 300 s and
 * rocketwire's SimpleConsumer with 1 s – 12 h, so 1 s – 12 h refuses only nonsense such as −1 (a
 * message visible again at once) and never what a real client sends.
 */
export const DEFAULT_MIN_POP_INVISIBLE_TIME_MS = 1000;
export const DEFAULT_MAX_POP_INVISIBLE_TIME_MS = 12 * 3600_000;
/**
 * Longest extraInfo (receipt handle) an ACK or CHANGE_INVISIBLETIME may carry: eight fields of
 * which only the broker name is text (at most a few dozen characters in any real cluster).
 */
export const MAX_EXTRA_INFO_LENGTH = 1024;
/** The fields of a receipt handle every 5.x broker writes and every client sends back. */
const EXTRA_INFO_FIELDS = 8;

/** PopAckConstants / BrokerConfig defaults of Apache 5.x. */
export const REVIVE_QUEUE_NUM = 8;
export const MAX_POP_NUMS = 32;
/** BrokerConfig.popFromRetryProbability: the share of pops that read the retry topic first. */
export const POP_FROM_RETRY_PROBABILITY = 20;
/** PopMessageProcessor: a request born longer than pollTime + 500 ms ago is answered 210 at once. */
export const BORN_TIME_SLACK_MS = 500;
/** PopLongPollingService: most waiting pops on one topic. */
export const MAX_POLLING_PER_KEY = 1024;

export interface PopServiceOptions {
  /** How often the revive scan runs (ms on the broker's clock). Default 1000. */
  reviveIntervalMs?: number | undefined;
  /** How often checkpoints are written to disk. Default 5000 (the consumer offsets' period). */
  persistIntervalMs?: number | undefined;
  /** Percent of pops that read the pop retry topic first (popFromRetryProbability). Default 20. */
  popFromRetryProbability?: number | undefined;
  /** Random source in [0, 1) for the queue to start at and the retry draw. Default Math.random. */
  random?: (() => number) | undefined;
  /** Smallest invisibleTime a POP_MESSAGE may ask for (ms). Default 1000. */
  minPopInvisibleTimeMs?: number | undefined;
  /** Largest invisibleTime a POP_MESSAGE or CHANGE_INVISIBLETIME may ask for (ms). Default 43 200 000 (12 h). */
  maxPopInvisibleTimeMs?: number | undefined;
}

/** The invisible-time bounds of `o`, defaults filled in; BrokerOptionError naming a bad one. */
export function resolvePopInvisibleBounds(
  o: Pick<PopServiceOptions, 'minPopInvisibleTimeMs' | 'maxPopInvisibleTimeMs'>,
): { min: number; max: number } {
  const min = o.minPopInvisibleTimeMs ?? DEFAULT_MIN_POP_INVISIBLE_TIME_MS;
  const max = o.maxPopInvisibleTimeMs ?? DEFAULT_MAX_POP_INVISIBLE_TIME_MS;
  const check = optionValidator(BrokerOptionError, { atLeast: '≥' });
  check.safeIntAtLeast('minPopInvisibleTimeMs', min, 1);
  check.safeIntAtLeast('maxPopInvisibleTimeMs', max, min, `minPopInvisibleTimeMs (${min})`);
  return { min, max };
}

/**
 * Why an extraInfo (receipt handle) is refused before it is read, or null. Apache splits any
 * string on spaces and reads its first fields (100 000 fields pass); here it is at most
 * MAX_EXTRA_INFO_LENGTH characters and exactly 8 fields, as every broker writes it.
 */
export function extraInfoRemark(extraInfo: string): string | null {
  if (extraInfo.length > MAX_EXTRA_INFO_LENGTH)
    return `extraInfo is ${extraInfo.length} characters, more than ${MAX_EXTRA_INFO_LENGTH}: not a receipt handle`;
  let fields = 1;
  for (let i = extraInfo.indexOf(' '); i !== -1; i = extraInfo.indexOf(' ', i + 1)) fields++;
  if (fields !== EXTRA_INFO_FIELDS)
    return `extraInfo has ${fields} fields, not ${EXTRA_INFO_FIELDS} (ckQueueOffset popTime invisibleTime reviveQid retry brokerName queueId queueOffset)`;
  return null;
}
