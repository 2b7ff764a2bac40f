import type { Message } from '../producer/index.js';
import { UsageError, intOption } from './common.js';

/** `produce --delay-ms N` / `--deliver-at EPOCH_MS`: the message's delayMs / deliverAt, checked like every int flag. */
export function timerFlags(
  delayMs: string | undefined,
  deliverAt: string | undefined,
  batch: number,
): Pick<Message, 'delayMs' | 'deliverAt'> {
  if (delayMs === undefined && deliverAt === undefined) return {};
  if (delayMs !== undefined && deliverAt !== undefined)
    throw new UsageError('--delay-ms and --deliver-at exclude each other');
  // Java's canBatch keeps timer messages out of batches; the broker's batch path would store them at once
  if (batch > 1)
    throw new UsageError(`${delayMs !== undefined ? '--delay-ms' : '--deliver-at'} cannot be used with --batch`);
  if (delayMs !== undefined) return { delayMs: intOption('delay-ms', delayMs, 0, 0) };
  return { deliverAt: intOption('deliver-at', deliverAt, 0, 0) };
}
