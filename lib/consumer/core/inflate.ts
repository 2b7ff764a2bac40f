import { MAX_DECOMPRESSED_BODY, type MessageExt } from '../../../protocol/internal.js';
import { ConsumerOptionError } from '../errors.js';
import { UndecodableMessageError, type UndecodableDisposition } from '../errors.js';

const MIB = 1024 * 1024;

/**
 * How much a consumer inflates: a bound per body and a budget per pull, so that a pull of zip bombs
 * cannot take the process's memory (docs/hardening.md). Shared by
 * the push, lite pull and simple consumers.
 * @category Consuming
 */
export interface InflateOptions {
  /**
   * Largest body, in bytes, a COMPRESSED message may inflate to; a message whose body would inflate
   * past it is refused (push: sent back as a failed message, retry topic then DLQ; POP: left
   * unacked, the broker redelivers it then moves it to the DLQ; lite pull: reported by the
   * `'undecodable'` event and passed). 1 KiB..2 GiB − 1.
   * @default 67108864 (64 MiB, protocol's MAX_DECOMPRESSED_BODY)
   */
  maxInflatedBodyBytes?: number;
  /**
   * Bytes one pull (one POP answer, one receive()) may inflate. Once they are spent, the pull's
   * remaining messages are not inflated: push and lite pull consumers pull them again from their
   * offset, POP consumers inflate them in later rounds (after the round before was consumed). The
   * first compressed body of a pull may always use the whole maxInflatedBodyBytes, so a pull
   * inflates at most max(maxInflatedBytesPerPull, maxInflatedBodyBytes). 1 KiB..2 GiB − 1.
   * @default 67108864 (64 MiB)
   */
  maxInflatedBytesPerPull?: number;
}

/** InflateOptions with their defaults. */
export interface ResolvedInflateOptions {
  maxInflatedBodyBytes: number;
  maxInflatedBytesPerPull: number;
}

const MIN_BYTES = 1024;
const MAX_BYTES = 2 ** 31 - 1;

function bytesOption(name: keyof InflateOptions, value: unknown, dflt: number): number {
  if (value === undefined) return dflt;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_BYTES || value > MAX_BYTES) {
    throw new ConsumerOptionError(
      name,
      `must be an integer number of bytes in [${MIN_BYTES}, ${MAX_BYTES}], got ${String(value)}`,
    );
  }
  return value;
}

/** Defaults and ranges of InflateOptions; a bad value is a ConsumerOptionError naming it. */
export function resolveInflateOptions(o: InflateOptions): ResolvedInflateOptions {
  return {
    maxInflatedBodyBytes: bytesOption('maxInflatedBodyBytes', o.maxInflatedBodyBytes, MAX_DECOMPRESSED_BODY),
    maxInflatedBytesPerPull: bytesOption('maxInflatedBytesPerPull', o.maxInflatedBytesPerPull, 64 * MIB),
  };
}

/** The round options of protocol's inflateMessages for these options. */
export function roundOptions(o: ResolvedInflateOptions): { maxBodyBytes: number; budgetBytes: number } {
  return { maxBodyBytes: o.maxInflatedBodyBytes, budgetBytes: o.maxInflatedBytesPerPull };
}

/**
 * What a consumer's inflation did so far (stats().inflate): counts and high-water marks that tests
 * and operators read to see that the bounds hold.
 * @category Consuming
 */
export interface InflateStats {
  /** Bytes inflated, in total (including output thrown away at a limit). */
  inflatedBytes: number;
  /** The most bytes one pull (POP answer round, receive) inflated. */
  maxInflatedBytesOfPull: number;
  /** Pulls cut short because their inflate budget was spent (their rest is pulled or inflated again). */
  budgetCuts: number;
  /** Messages refused because their body would inflate past maxInflatedBodyBytes. */
  refusedTooLarge: number;
  /** Messages refused because their body cannot be inflated at all (corrupt, unsupported codec). */
  refusedCorrupt: number;
}

export function newInflateStats(): InflateStats {
  return { inflatedBytes: 0, maxInflatedBytesOfPull: 0, budgetCuts: 0, refusedTooLarge: 0, refusedCorrupt: 0 };
}

/** Counts one round of protocol's inflateMessages. */
export function countRound(
  s: InflateStats,
  round: { inflatedBytes: number; refused: readonly { tooLarge: boolean }[] },
  cut: boolean,
): void {
  s.inflatedBytes += round.inflatedBytes;
  if (round.inflatedBytes > s.maxInflatedBytesOfPull) s.maxInflatedBytesOfPull = round.inflatedBytes;
  if (cut) s.budgetCuts++;
  for (const r of round.refused) {
    if (r.tooLarge) s.refusedTooLarge++;
    else s.refusedCorrupt++;
  }
}

/**
 * Messages of a pull that were refused (their body could not be inflated): they keep their stored,
 * compressed body, sit in the process queue so that no offset is committed past them, and are
 * sent back instead of being handed to the handler.
 */
const refusedMessages = new WeakSet<MessageExt>();

export function markRefused(m: MessageExt): void {
  refusedMessages.add(m);
}

export function isRefused(m: MessageExt): boolean {
  return refusedMessages.has(m);
}

/** The reason text of a refused message: names the option when the per-body limit refused it. */
export function refusalReason(r: { tooLarge: boolean; error: Error }, o: ResolvedInflateOptions): string {
  const first = r.error.message.split('\n')[0]!;
  return r.tooLarge
    ? `${first}; raise the option maxInflatedBodyBytes (${o.maxInflatedBodyBytes}) to consume it`
    : first;
}

/** The 'undecodable' event's error for a whole record whose body was refused (too large, or not inflatable), naming its queue and offset. */
export function refusedMessageError(
  mq: { topic: string; brokerName: string; queueId: number },
  m: MessageExt,
  r: { tooLarge: boolean; error: Error },
  o: ResolvedInflateOptions,
  disposition: UndecodableDisposition,
): UndecodableMessageError {
  return new UndecodableMessageError({
    topic: mq.topic,
    brokerName: mq.brokerName,
    queueId: mq.queueId,
    queueOffset: m.queueOffset,
    physOffset: m.commitLogOffset,
    recordIntact: true,
    bytes: m.storeSize,
    reason: refusalReason(r, o),
    disposition,
    option: r.tooLarge ? 'maxInflatedBodyBytes' : undefined,
    limit: r.tooLarge ? o.maxInflatedBodyBytes : undefined,
  });
}
