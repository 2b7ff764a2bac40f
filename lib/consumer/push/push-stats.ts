import type { ConsumerStats, QueueStats } from '../core/consumer-stats.js';
import type { PushHost } from './push-host.js';

/** PushConsumer.stats(): counters, rates over the last 10 s and per-queue cache figures. */
export function consumerStats(
  impl: Pick<PushHost, 'config' | 'recorder' | 'rebalance' | 'running' | 'clientId'>,
): ConsumerStats {
  const now = impl.config.clock.now();
  const s = impl.recorder;
  const queues: QueueStats[] = [];
  for (const { mq, pq } of impl.rebalance.processQueueTable.values()) {
    const pr = pq.pullRequest;
    queues.push({
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      cachedCount: pq.msgCount,
      cachedBytes: pq.msgSize,
      peakCachedBytes: pq.peakMsgSize,
      span: pq.maxSpan,
      committedOffset: impl.running?.offsetStore.readMemory(mq) ?? -1,
      pulledOffset: pr?.nextOffset ?? -1,
      flowControlPauses: { ...(pr?.flowControlPauses ?? { count: 0, size: 0, span: 0 }) },
      locked: pq.locked,
      dropped: pq.dropped,
    });
  }
  return {
    consumerGroup: impl.config.consumerGroup,
    clientId: impl.clientId,
    pulls: s.pulls.total,
    pullsFound: s.pullsFound,
    pullErrors: s.pullErrors,
    messagesPulled: s.pulledMessages.total,
    messagesConsumed: s.consumedOk.total,
    messagesFailed: s.consumedFailed.total,
    sendBackOk: s.sendBackOk,
    sendBackFailed: s.sendBackFailed,
    republished: s.republished,
    localRetries: s.localRetries,
    expired: s.expired,
    rebalances: s.rebalances,
    flowControlPauses: { ...s.flowControl },
    inflate: { ...s.inflate },
    pullTps: s.pulls.rate(now),
    pulledMsgTps: s.pulledMessages.rate(now),
    consumeOkTps: s.consumedOk.rate(now),
    consumeFailedTps: s.consumedFailed.rate(now),
    consumeRtMs: s.consumeRtCount === 0 ? 0 : s.consumeRtSum / s.consumeRtCount,
    consumeInFlight: impl.running?.consume.service.inFlightCount ?? 0,
    consumeBacklog: impl.running?.consume.service.backlogCount ?? 0,
    queues,
  };
}
