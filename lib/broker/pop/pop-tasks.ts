import type { Clock } from '../../clock.js';
import { OnDemandTask } from '../periodic-task.js';
import type { ConsumerOrderInfoManager } from './consumer-order-info.js';
import type { PopCheckpointTable } from './pop-checkpoints.js';
import type { PopServiceOptions } from './pop-options.js';

/**
 * The POP service's periodic tasks, each run only while it has work: the revive scan while a
 * checkpoint is open (every `reviveIntervalMs`), the persist of the checkpoints and order infos
 * while one of them has changes not written (every `persistIntervalMs`). Returns their stop.
 */
export function startPopTasks(
  clock: Clock,
  options: PopServiceOptions,
  checkpoints: PopCheckpointTable,
  orderInfo: ConsumerOrderInfoManager,
  revive: () => void,
  onError: (err: unknown) => void,
): () => void {
  const reviving = new OnDemandTask(
    clock,
    options.reviveIntervalMs ?? 1000,
    () => {
      revive();
      return checkpoints.size > 0;
    },
    onError,
  );
  const persisting = new OnDemandTask(
    clock,
    options.persistIntervalMs ?? 5000,
    () => {
      checkpoints.persist();
      orderInfo.persist();
      return checkpoints.unsaved.value || orderInfo.unsaved.value;
    },
    onError,
  );
  const wake = (): void => {
    if (checkpoints.size > 0) reviving.wake();
    if (checkpoints.unsaved.value || orderInfo.unsaved.value) persisting.wake();
  };
  checkpoints.unsaved.onChange = wake;
  orderInfo.unsaved.onChange = wake;
  wake();
  return () => {
    reviving.stop();
    persisting.stop();
  };
}
