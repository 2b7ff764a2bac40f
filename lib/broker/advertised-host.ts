import * as os from 'node:os';

/**
 * The address put in STOREHOST and routes: the listen address, or for a wildcard listen the first
 * external IPv4 address (what Java's RemotingUtil.getLocalAddress picks), else loopback.
 */
export function advertisedHost(listen: string): string {
  if (listen !== '0.0.0.0' && listen !== '::') return listen;
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
