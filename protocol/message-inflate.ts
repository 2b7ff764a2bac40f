import { decompressBody, MAX_DECOMPRESSED_BODY } from './compression.js';
import { InflatedBodyTooLargeError } from './errors.js';
import type { MessageExt } from './message-ext.js';
import { MessageSysFlag } from './sys-flag.js';

/** How inflateMessages bounds what one round inflates. */
export interface InflateRoundOptions {
  /**
   * Largest inflated body, in bytes: a body that would inflate past it is refused.
   * @default MAX_DECOMPRESSED_BODY (64 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Bytes one round may inflate. The first compressed body of a round may always inflate up to
   * maxBodyBytes (so that every round makes progress); each later one only to what is left of the
   * budget. A round therefore produces at most max(budgetBytes, maxBodyBytes) bytes, counting the
   * output of a decompression stopped at its limit and thrown away.
   * @default Infinity
   */
  budgetBytes?: number;
}

/** A message inflateMessages could not inflate; it keeps its stored (compressed) body and sysFlag. */
export interface RefusedMessage {
  /** Index of the message in the array given to inflateMessages. */
  index: number;
  /** True when the body would inflate past maxBodyBytes; false when it cannot be inflated at all. */
  tooLarge: boolean;
  /** The InflatedBodyTooLargeError, or the ProtocolError of a corrupt or unsupported body. */
  error: Error;
}

/** What one round of inflateMessages did. */
export interface InflateRound {
  /**
   * Index of the first message not dealt with because the budget was spent (the array's length when
   * the round reached the end): messages [from, end) are inflated, were not compressed, or are refused.
   */
  end: number;
  /** Messages of [from, end) left compressed because they could not be inflated. */
  refused: RefusedMessage[];
  /** Bytes the round's decompressions produced, those thrown away at a limit included. */
  inflatedBytes: number;
  /** Bytes of the inflated bodies kept (≤ inflatedBytes). */
  keptBytes: number;
}

/**
 * Inflates, in place, the COMPRESSED bodies of `msgs` (decoded with `decompress: false`) from index
 * `from` on, within a budget: stops before the first message whose body would not fit in what is
 * left of `budgetBytes` (the caller pulls it again, or inflates it in a later round), and refuses a
 * body that would pass `maxBodyBytes` (or cannot be inflated) without stopping. An inflated
 * message's sysFlag loses COMPRESSED, as decodeMessages leaves it.
 *
 * This is how a consumer bounds the memory one pull costs: a pull frame of 16 MiB can carry ~250
 * zlib bodies of 64 KB that inflate to 63 MiB each (16 GB), all under a per-body limit.
 */
export function inflateMessages(msgs: MessageExt[], from = 0, options?: InflateRoundOptions): InflateRound {
  const maxBody = options?.maxBodyBytes ?? MAX_DECOMPRESSED_BODY;
  const budget = options?.budgetBytes ?? Infinity;
  const refused: RefusedMessage[] = [];
  let spent = 0;
  let kept = 0;
  let i = from;
  for (; i < msgs.length; i++) {
    const m = msgs[i]!;
    if ((m.sysFlag & MessageSysFlag.COMPRESSED_FLAG) === 0) continue;
    // The first body of a round may use the whole per-body limit; the later ones what is left.
    const first = spent === 0;
    const limit = first ? maxBody : Math.min(maxBody, budget - spent);
    if (limit <= 0) break;
    try {
      const body = decompressBody(m.body, m.sysFlag, 0, limit);
      m.body = body;
      m.sysFlag &= ~MessageSysFlag.COMPRESSED_FLAG;
      spent += body.length;
      kept += body.length;
    } catch (e) {
      if (e instanceof InflatedBodyTooLargeError) {
        spent += limit;
        if (limit < maxBody) break; // over what is left of the budget, not over the per-body limit
        refused.push({ index: i, tooLarge: true, error: e });
      } else {
        refused.push({ index: i, tooLarge: false, error: e instanceof Error ? e : new Error(String(e)) });
      }
    }
  }
  return { end: i, refused, inflatedBytes: spent, keptBytes: kept };
}
