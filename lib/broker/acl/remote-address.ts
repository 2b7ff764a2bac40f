import net from 'node:net';
import { AddressPatternError } from './errors.js';

/**
 * White-listed remote addresses (plain_acl.yml's globalWhiteRemoteAddresses and an account's
 * whiteRemoteAddress), with the forms of Apache's RemoteAddressStrategyFactory:
 *
 * | form | matches |
 * | --- | --- |
 * | empty | nothing |
 * | `*`, `*.*.*.*`, `*:*:*:*:*:*:*:*` | every address |
 * | `192.168.0.1`, `::1` | that address (IPv6 compared in its expanded form) |
 * | `192.168.0.1,192.168.0.2` | any address of the list |
 * | `192.168.0.{1,2,3}` | the last part from the braces |
 * | `192.168.*`-style parts: `192.168.1.*`, `192.168.*.*`, `192.168.1.1-50`, `10.10.0-31.*` | each part in its range (`*` = 0–255) |
 *
 * IPv6 ranges and braces (Apache's `::1:*`, `::{1,2}`) are not supported: such a file is refused at
 * load with a message saying to list the addresses.
 */
export interface AddressPattern {
  /** The pattern as written. */
  readonly text: string;
  matches(host: string): boolean;
}

/** The host of a connection's "host:port" / "[v6]:port" remote address. */
export function hostOfRemoteAddress(remoteAddress: string): string {
  const m = /^\[(.*)\]:\d+$/.exec(remoteAddress);
  if (m) return m[1]!;
  const i = remoteAddress.lastIndexOf(':');
  if (i > 0 && remoteAddress.indexOf(':') === i) return remoteAddress.slice(0, i);
  return remoteAddress;
}

/** An IPv6 address as 8 four-digit upper-case groups (Apache's AclUtils.expandIP), or null when it is not one. */
export function expandIPv6(address: string): string | null {
  if (!net.isIPv6(address)) return null;
  let a = address.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (v4) {
    const p = v4[1]!.split('.').map(Number);
    a = a.slice(0, -v4[1]!.length) + ((p[0]! << 8) | p[1]!).toString(16) + ':' + ((p[2]! << 8) | p[3]!).toString(16);
  }
  const [head, tail] = a.includes('::') ? a.split('::') : [a, undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => g.padStart(4, '0').toUpperCase()).join(':');
}

const ALL = new Set(['*', '*.*.*.*', '*:*:*:*:*:*:*:*']);

function octet(pattern: string, s: string): number {
  if (!/^\d{1,3}$/.test(s) || Number(s) > 255)
    throw new AddressPatternError(pattern, `${JSON.stringify(s)} is not a number from 0 to 255`);
  return Number(s);
}

function oneAddress(pattern: string, raw: string): string {
  const s = raw.trim();
  if (net.isIPv4(s)) return s;
  const v6 = expandIPv6(s);
  if (v6 !== null) return v6;
  throw new AddressPatternError(pattern, `${JSON.stringify(s)} is not an IPv4 or IPv6 address`);
}

/** Normalise a connection's host for comparison with oneAddress's results. */
function normalHost(host: string): string {
  return net.isIPv4(host) ? host : (expandIPv6(host) ?? host);
}

/** Parse one white-list entry; throws AddressPatternError for what Apache would refuse too. */
export function parseAddressPattern(text: string | null | undefined): AddressPattern {
  const pattern = (text ?? '').trim();
  if (pattern === '') return { text: pattern, matches: () => false };
  if (ALL.has(pattern)) return { text: pattern, matches: () => true };
  if (pattern.endsWith('}')) {
    const open = pattern.lastIndexOf('{');
    const prefix = pattern.slice(0, open);
    if (open < 0 || pattern.includes(':')) {
      throw new AddressPatternError(
        pattern,
        'braces are supported for IPv4 only (a.b.c.{x,y}); list IPv6 addresses with commas',
      );
    }
    if (prefix.split('.').length !== 4 || !prefix.endsWith('.'))
      throw new AddressPatternError(pattern, 'braces must hold the last of four parts: a.b.c.{x,y}');
    const set = new Set(
      pattern
        .slice(open + 1, -1)
        .split(',')
        .map((p) => oneAddress(pattern, prefix + p.trim())),
    );
    return { text: pattern, matches: (host) => set.has(normalHost(host)) };
  }
  if (pattern.includes(',')) {
    const set = new Set(pattern.split(',').map((p) => oneAddress(pattern, p)));
    return { text: pattern, matches: (host) => set.has(normalHost(host)) };
  }
  if (pattern.includes('*') || pattern.includes('-')) {
    if (pattern.includes(':'))
      throw new AddressPatternError(pattern, 'IPv6 ranges are not supported; list the addresses with commas');
    const parts = pattern.split('.');
    if (parts.length !== 4)
      throw new AddressPatternError(pattern, 'an IPv4 range has four parts, e.g. 192.168.1.* or 192.168.1.1-50');
    const ranges = parts.map((p): [number, number] => {
      const s = p.trim();
      if (s === '*') return [0, 255];
      const dash = s.indexOf('-');
      if (dash >= 0) {
        const lo = octet(pattern, s.slice(0, dash));
        const hi = octet(pattern, s.slice(dash + 1));
        if (lo > hi) throw new AddressPatternError(pattern, `range ${s} runs backwards`);
        return [lo, hi];
      }
      const n = octet(pattern, s);
      return [n, n];
    });
    return {
      text: pattern,
      matches: (host) => {
        if (!net.isIPv4(host)) return false;
        const o = host.split('.').map(Number);
        return ranges.every(([lo, hi], i) => o[i]! >= lo && o[i]! <= hi);
      },
    };
  }
  const one = oneAddress(pattern, pattern);
  return { text: pattern, matches: (host) => normalHost(host) === one };
}
