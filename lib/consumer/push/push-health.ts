import { instanceHealth } from '../../client/health.js';
import type { ConsumerHealth, QueueHealth } from '../core/health.js';
import type { PushHost } from './push-host.js';

/** PushConsumer.health(). */
export function pushConsumerHealth(
  impl: Pick<PushHost, 'config' | 'state' | 'paused' | 'pausedQueues' | 'rebalance' | 'running' | 'instance'>,
): ConsumerHealth {
  const queues: QueueHealth[] = [];
  for (const { mq, pq } of impl.rebalance.processQueueTable.values()) {
    if (pq.dropped) continue;
    const pr = pq.pullRequest;
    const committed = impl.running?.offsetStore.readMemory(mq) ?? -1;
    const max = pr?.brokerMaxOffset ?? -1;
    queues.push({
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      lastPullAnsweredAtMs: pr?.lastAnsweredAtMs ?? null,
      lag: max >= 0 && committed >= 0 ? Math.max(0, max - committed) : -1,
      cached: pq.msgCount,
      paused: impl.paused || impl.pausedQueues.isPaused(mq),
      flowControlled: pr?.parkReason ?? null,
    });
  }
  const inst = instanceHealth(impl.instance);
  return {
    state: impl.state,
    ready: impl.state === 'RUNNING' && inst.nameServer.lastAnswer !== null,
    group: impl.config.consumerGroup,
    ...inst,
    queues,
  };
}
