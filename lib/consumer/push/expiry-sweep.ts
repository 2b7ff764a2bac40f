import createDebug from '../../debug.js';
import { SendBackFailedError } from '../errors.js';
import type { PushHost } from './push-host.js';

const log = createDebug('rocketwire:consumer');

/**
 * The expiry sweep (docs/protocol-facts.md#process-queue-and-expiry, Java's
 * ConsumeMessageConcurrentlyService.cleanExpireMsg), every consumeTimeoutMs: up to 16 of the oldest
 * messages of each queue whose handler started too long ago are sent back.
 */
export async function cleanExpiredMsg(
  impl: Pick<PushHost, 'config' | 'rebalance' | 'recorder' | 'offsetStore' | 'sendMessageBack' | 'onConsumed'>,
): Promise<void> {
  const timeout = impl.config.consumeTimeoutMs;
  for (const { mq, pq } of [...impl.rebalance.processQueueTable.values()]) {
    if (pq.dropped) continue;
    const { cleaned, offset } = await pq.cleanExpiredMsg(impl.config.clock.now(), timeout, async (msg) => {
      // Java sends expired messages back with delay level 3 through the same path as failures.
      const ok = await impl.sendMessageBack(msg, 3, mq.brokerName);
      if (!ok) throw new SendBackFailedError(msg.msgId);
    });
    if (cleaned > 0) {
      impl.recorder.expired += cleaned;
      // Java leaves the offset to the next completed call; when every other message is already done
      // there is none, and the queue would stay committed before the expired (already retried) message.
      if (offset >= 0 && !pq.dropped) impl.offsetStore.updateOffset(mq, offset, true);
      log('expired %d messages of %o', cleaned, mq);
      impl.onConsumed(pq);
    }
  }
}
