import type { MessageQueue, SubscriptionData } from '../../../protocol/index.js';
import type { MQClientInstance } from '../../client/index.js';
import type { ConsumerEvents } from '../core/consumer-events.js';
import type { ConsumeHost } from '../core/consume-host.js';
import type { MessageListener } from '../core/consume-types.js';
import type { ConsumerStatsRecorder } from '../core/consumer-stats.js';
import type { ConsumerInstrumentation } from '../core/events.js';
import type { FlowLimits } from '../core/flow-control.js';
import type { ConsumerState } from '../core/lifecycle.js';
import type { ConsumerConfig } from '../core/consumer-config.js';
import type { PullMessageService } from '../core/pull-message-service.js';
import type { RebalancePushImpl } from './rebalance-push-impl.js';
import type { PausedQueues } from './pause.js';
import type { PushRunning } from './push-running.js';

/**
 * What the push consumer's function modules (the pull path, send-backs, the broker-initiated
 * requests, stats and health) read of the consumer. Each module names the members it uses with
 * `Pick<PushHost, …>`, so none of them depends on PushConsumerImpl, which implements this.
 */
export interface PushHost extends ConsumeHost {
  readonly config: ConsumerConfig;
  readonly state: ConsumerState;
  /** suspend() was called and resume() not yet. */
  readonly paused: boolean;
  readonly recorder: ConsumerStatsRecorder;
  /** The 'undecodable', 'brokerError' and 'brokerReachable' events. */
  readonly events: ConsumerEvents;
  /** The instrumentation events' state (events.ts). */
  readonly instr: ConsumerInstrumentation;
  /** The flow-control limits in force (per-topic limits divide among the queues held). */
  readonly limits: FlowLimits;
  readonly subscriptionInner: Map<string, SubscriptionData>;
  readonly pullService: PullMessageService;
  readonly pausedQueues: PausedQueues;
  readonly rebalance: RebalancePushImpl;
  /** Pulls sent and OFFSET_ILLEGAL handling under way; shutdown waits for them. */
  readonly inflightPulls: Set<Promise<void>>;
  /** Clock time start() began (GET_CONSUMER_RUNNING_INFO). */
  readonly startTimestamp: number;
  readonly listener: MessageListener | null;
  /** Round-robin index over the retry topic's queues for republished messages. */
  publishIndex: number;
  /** What start() made; null before start(). */
  readonly running: PushRunning | null;
  /** What start() made; ConsumerStateError before start(). */
  readonly run: PushRunning;
  /** The client instance once started, else null. */
  readonly instance: MQClientInstance | null;
  /** The client id the group sees, '' before start(). */
  readonly clientId: string;
  computePullFromWhere(mq: MessageQueue): Promise<number>;
  doRebalance(): void;
  suspend(): void;
  resume(): void;
}
