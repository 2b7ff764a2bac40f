import { PermName } from '../../protocol/internal.js';

/**
 * WIPE_WRITE_PERM_OF_BROKER / ADD_WRITE_PERM_OF_BROKER on the name server's routes
 * (RouteInfoManager#operateWritePermOfBroker): every topic route entry of the broker loses its
 * write permission (wipe), or is set to read and write (add: Java sets 6 whatever the perm was, so
 * a read-only topic becomes writable too). The broker's own topic configs are not touched: its next
 * registration of a changed topic brings that topic's own perm back. Returns the entries changed.
 */
export function operateWritePerm(
  topicQueues: ReadonlyMap<string, ReadonlyMap<string, { perm: number }>>,
  brokerName: string,
  how: 'wipe' | 'add',
): number {
  let n = 0;
  for (const m of topicQueues.values()) {
    const qd = m.get(brokerName);
    if (!qd) continue;
    qd.perm = how === 'wipe' ? qd.perm & ~PermName.PERM_WRITE : PermName.PERM_READ | PermName.PERM_WRITE;
    n++;
  }
  return n;
}
