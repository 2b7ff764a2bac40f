import net from 'node:net';
import { AddressError } from './errors.js';

/**
 * Remoting addresses are "host:port" as RocketMQ writes them (name server lists, broker addresses in
 * route data); IPv6 hosts are written "[v6]:port".
 */
export function parseAddress(addr: string): { host: string; port: number } {
  const s = addr.trim();
  let host: string;
  let portText: string;
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0 || s[end + 1] !== ':') throw new AddressError(addr, 'is not "[v6]:port"');
    host = s.slice(1, end);
    portText = s.slice(end + 2);
  } else {
    const colon = s.lastIndexOf(':');
    if (colon <= 0) throw new AddressError(addr, 'is not "host:port"');
    host = s.slice(0, colon);
    portText = s.slice(colon + 1);
  }
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) {
    throw new AddressError(addr, 'has no valid port');
  }
  return { host, port };
}

export function formatAddress(host: string, port: number): string {
  const h = host.startsWith('::ffff:') && net.isIPv4(host.slice(7)) ? host.slice(7) : host;
  return net.isIPv6(h) ? `[${h}]:${port}` : `${h}:${port}`;
}
