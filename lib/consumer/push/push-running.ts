import type { MQClientInstance } from '../../client/index.js';
import type { ConsumerMetrics } from '../../metrics/index.js';
import type { ConsumerTrace } from '../../trace/trace-hooks.js';
import type { OffsetStore } from '../core/offset-store.js';
import type { ConsumeMessageConcurrentlyService } from './consume-message-concurrently-service.js';
import type { ConsumeMessageOrderlyService } from './consume-message-orderly-service.js';

/** The consume service of the consumer's mode: one of the two, never both. */
export type PushConsumeService =
  | { readonly orderly: false; readonly service: ConsumeMessageConcurrentlyService }
  | { readonly orderly: true; readonly service: ConsumeMessageOrderlyService };

/**
 * What start() makes and the running consumer works with: none of it exists before start(), so the
 * consumer holds one of these (or nothing) rather than a field per part that is null until then.
 */
export interface PushRunning {
  readonly instance: MQClientInstance;
  /** The client id the group sees (ip@instance). */
  readonly clientId: string;
  readonly offsetStore: OffsetStore;
  readonly consume: PushConsumeService;
  /** enableTrace: the SubBefore/SubAfter records' dispatcher (lib/trace); null when off. */
  readonly trace: ConsumerTrace | null;
  /** The metrics (lib/metrics); null when off. */
  readonly metrics: ConsumerMetrics | null;
  /** Stops the name-server status listener start() registered. */
  readonly stopNameServerEvents: () => void;
}
