import type { MQClientInstance } from '../../client/index.js';
import type { ConsumerMetrics } from '../../metrics/index.js';
import type { OffsetStore } from '../core/offset-store.js';
import type { ConsumerTrace } from '../../trace/trace-hooks.js';

/**
 * What start() makes and the running lite pull consumer works with: none of it exists before
 * start(), so the consumer holds one of these (or nothing) rather than fields null until then.
 */
export interface LitePullRunning {
  readonly instance: MQClientInstance;
  /** The client id the group sees (ip@instance). */
  readonly clientId: string;
  readonly offsetStore: OffsetStore;
  /** Delivery latency, await time (arrival to poll) and the cache gauges (lib/metrics); null when off. */
  readonly metrics: ConsumerMetrics | null;
  /** enableTrace: SubBefore/SubAfter records of what poll() hands over (lib/trace); null when off. */
  readonly trace: ConsumerTrace | null;
  /** Stops the name-server status listener start() registered. */
  readonly stopNameServerEvents: () => void;
}
