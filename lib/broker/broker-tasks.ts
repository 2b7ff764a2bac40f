import type { Clock } from '../clock.js';
import type { ConsumerManager } from './consumer-manager.js';
import type { ConsumerOffsetManager } from './consumer-offset-manager.js';
import { OnDemandTask } from './periodic-task.js';

/** ClientHousekeepingService scans for channels no heartbeat refreshed every 10 s. */
const SCAN_NOT_ACTIVE_CHANNEL_INTERVAL_MS = 10_000;

/**
 * The broker's own periodic tasks, each run only while it has work: the scan for expired client
 * channels while a client is registered, the persist of the consumer offsets while they changed
 * and were not written (every `flushConsumerOffsetIntervalMs`). Returns their stop.
 */
export function startBrokerTasks(
  clock: Clock,
  consumers: ConsumerManager,
  offsets: ConsumerOffsetManager,
  flushConsumerOffsetIntervalMs: number,
  onError: (err: unknown) => void,
): () => void {
  const scanning = new OnDemandTask(
    clock,
    SCAN_NOT_ACTIVE_CHANNEL_INTERVAL_MS,
    () => {
      consumers.scanExpired(clock.now());
      return consumers.hasClients;
    },
    onError,
  );
  const persisting = new OnDemandTask(
    clock,
    flushConsumerOffsetIntervalMs,
    () => {
      offsets.persist();
      return offsets.unsaved.value;
    },
    onError,
  );
  consumers.onRegister = () => scanning.wake();
  offsets.unsaved.onChange = () => persisting.wake();
  if (consumers.hasClients) scanning.wake();
  if (offsets.unsaved.value) persisting.wake();
  return () => {
    scanning.stop();
    persisting.stop();
  };
}
