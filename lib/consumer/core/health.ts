import type { BrokerHealth, NameServerHealth } from '../../client/health.js';
import type { FlowControlReason } from './flow-control.js';

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
