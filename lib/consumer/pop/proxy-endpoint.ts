import * as os from 'node:os';

// Telling a 5.x proxy from a broker: the proxy's routes name the proxy itself as every broker.

function splitHostPort(addr: string): [string, string] {
  const i = addr.lastIndexOf(':');
  return i < 0 ? [addr, ''] : [addr.slice(0, i).replace(/^\[|\]$/g, ''), addr.slice(i + 1)];
}

/** Loopback names and every address of this machine's interfaces. */
function isLocalHost(host: string): boolean {
  if (host === 'localhost' || host.startsWith('127.') || host === '::1') return true;
  for (const list of Object.values(os.networkInterfaces()))
    for (const i of list ?? []) if (i.address === host) return true;
  return false;
}

/**
 * Whether two "host:port" name one endpoint. The 5.x proxy names itself in its routes at the
 * machine's own address (its `localServeAddr`), not the one the client dialled (127.0.0.1 for a
 * proxy on this machine): the same port on two addresses of this machine is one process.
 */
export function sameEndpoint(a: string, b: string): boolean {
  if (a === b) return true;
  const [ha, pa] = splitHostPort(a);
  const [hb, pb] = splitHostPort(b);
  return pa !== '' && pa === pb && isLocalHost(ha) && isLocalHost(hb);
}
