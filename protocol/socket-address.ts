import { ProtocolError } from './errors.js';

/**
 * Host addresses as RocketMQ stores them in messages and ids: IP bytes in network order followed
 * by an int32 port (8 bytes for IPv4, 20 for IPv6). As text we use "ip:port" and "[v6]:port"
 * (IPv6 in RFC 5952 form, as Node's sockets report it); a leading "/" (Java's
 * InetSocketAddress.toString) is accepted on input.
 */
export interface SocketAddressBytes {
  /** 4 or 16 bytes */
  ip: Uint8Array;
  port: number;
}

const DEC: string[] = [];
for (let i = 0; i < 256; i++) DEC[i] = String(i);

/** "a.b.c.d" from 4 bytes at `pos`. */
export function formatIPv4(b: Uint8Array, pos: number): string {
  return DEC[b[pos]!] + '.' + DEC[b[pos + 1]!] + '.' + DEC[b[pos + 2]!] + '.' + DEC[b[pos + 3]!];
}

/** RFC 5952 text of the 16 bytes at `pos`: lower-case hex, longest run (>= 2) of zero groups as "::". */
export function formatIPv6(b: Uint8Array, pos: number): string {
  const g: number[] = new Array(8);
  for (let i = 0; i < 8; i++) g[i] = (b[pos + 2 * i]! << 8) | b[pos + 2 * i + 1]!;
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) bestStart = -1;
  // IPv4-mapped addresses keep the dotted tail, as Node prints them (::ffff:1.2.3.4).
  if (bestStart === 0 && bestLen === 5 && g[5] === 0xffff) return '::ffff:' + formatIPv4(b, pos + 12);
  let s = '';
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      s += '::';
      i += bestLen - 1;
      continue;
    }
    if (s.length > 0 && !s.endsWith(':')) s += ':';
    s += g[i]!.toString(16);
  }
  return s;
}

/** Text form of an address of `ipLength` (4 or 16) bytes followed by an int32 port at `pos`. */
export function formatSocketAddress(b: Uint8Array, pos: number, ipLength: 4 | 16): string {
  const p = pos + ipLength;
  const port = (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]! | 0;
  return ipLength === 4 ? formatIPv4(b, pos) + ':' + port : '[' + formatIPv6(b, pos) + ']:' + port;
}

/** Parse "1.2.3.4" into 4 bytes, or return null when `s` is not a dotted quad. */
export function parseIPv4(s: string): Uint8Array | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^\d{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

/** Parse any IPv6 text form (with "::" and an optional dotted IPv4 tail) into 16 bytes, or null. */
export function parseIPv6(s: string): Uint8Array | null {
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  let tail: Uint8Array | null = null;
  const lastColon = s.lastIndexOf(':');
  if (lastColon >= 0 && s.indexOf('.', lastColon) > 0) {
    tail = parseIPv4(s.slice(lastColon + 1));
    if (!tail) return null;
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...new Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const h = groups[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(h)) return null;
    const v = parseInt(h, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  }
  if (tail) out.set(tail, 12);
  return out;
}

/** Parse "ip:port", "[v6]:port" or "/ip:port"; throws ProtocolError (offset 0) on anything else. */
export function parseSocketAddress(text: string): SocketAddressBytes {
  let s = text.startsWith('/') ? text.slice(1) : text;
  let host: string;
  let portText: string;
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0 || s[close + 1] !== ':') throw badAddress(text);
    host = s.slice(1, close);
    portText = s.slice(close + 2);
  } else {
    const colon = s.lastIndexOf(':');
    if (colon < 0) throw badAddress(text);
    host = s.slice(0, colon);
    portText = s.slice(colon + 1);
    // Java's "host/ip:port" form: keep the ip part.
    const slash = host.indexOf('/');
    if (slash >= 0) host = host.slice(slash + 1);
  }
  s = host;
  if (!/^\d{1,10}$/.test(portText)) throw badAddress(text);
  const port = Number(portText);
  if (port > 0x7fffffff) throw badAddress(text);
  const ip = host.includes(':') ? parseIPv6(host) : parseIPv4(host);
  if (!ip) throw badAddress(text);
  return { ip, port };
}

function badAddress(text: string): ProtocolError {
  return new ProtocolError(`not an "ip:port" or "[ipv6]:port" address: ${JSON.stringify(text)}`, 0);
}

/** Write ip bytes + int32 port at `pos`; returns the position after them. */
export function writeSocketAddress(target: Uint8Array, pos: number, addr: SocketAddressBytes): number {
  target.set(addr.ip, pos);
  pos += addr.ip.length;
  const port = addr.port;
  target[pos] = port >>> 24;
  target[pos + 1] = port >>> 16;
  target[pos + 2] = port >>> 8;
  target[pos + 3] = port;
  return pos + 4;
}
