import { instanceHealth, type BrokerHealth, type NameServerHealth } from '../../client/health.js';
import type { FlowControlReason } from './flow-control.js';
import type { PushConsumerImpl } from '../push/push-consumer-impl.js';

export type { BrokerHealth, NameServerHealth };

/**
 * One held queue in health().
 * @category Consuming
 */
export interface QueueHealth {
  /** The queue's topic. */
  topic: string;
  /** The broker that holds the queue. */
  brokerName: string;
  /** The queue's id on that broker. */
  queueId: number;
  /** Epoch ms of the broker's last answer to a pull of this queue; null before the first. */
  lastPullAnsweredAtMs: number | null;
  /** Messages stored and not yet committed by this group: the broker's max offset − the committed offset (−1 while unknown). */
  lag: number;
  /** Messages pulled and waiting in the local cache. */
  cached: number;
  /** Paused by pause(), or the whole consumer suspended. */
  paused: boolean;
  /** Why the last pull was parked by flow control, or null when it was not. */
  flowControlled: FlowControlReason | null;
}

/**
 * A consumer's health(): plain data a readiness probe can return as JSON. `ready` is true when the
 * consumer runs and a name server has answered; it says nothing about traffic (a quiet topic is
 * healthy). See docs/health.md for a Kubernetes probe.
 * @category Consuming
 */
export interface ConsumerHealth {
  /** The consumer's state (CREATED, STARTING, RUNNING, SHUTTING_DOWN, SHUTDOWN). */
  state: string;
  /** The consumer runs and a name server has answered: what a readiness probe returns. */
  ready: boolean;
  /** The consumer group. */
  group: string;
  /** The last name server that answered, and when. */
  nameServer: NameServerHealth;
  /** Per broker known from the routes: its last answered heartbeat. */
  brokers: BrokerHealth[];
  /** Per held queue: last pull answered, lag, cache, paused and flow-controlled state. */
  queues: QueueHealth[];
}

export function pushConsumerHealth(impl: PushConsumerImpl): ConsumerHealth {
  const queues: QueueHealth[] = [];
  for (const { mq, pq } of impl.rebalance.processQueueTable.values()) {
    if (pq.dropped) continue;
    const pr = pq.pullRequest;
    const committed = impl.offsetStoreValue?.readMemory(mq) ?? -1;
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
