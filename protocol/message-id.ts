import { ProtocolError } from './errors.js';
import { formatSocketAddress, parseSocketAddress, writeSocketAddress } from './socket-address.js';

/**
 * Message ids (docs/protocol-facts.md#message-ids).
 * - offsetMsgId (the broker's): upper-case hex of store host IP (4/16 bytes) + port (int32) +
 *   commit-log offset (int64): 32 characters for IPv4, 56 for IPv6.
 * - UNIQ_KEY (the producer's): upper-case hex of IP (4/16) + pid (int16) + class-loader hash
 *   (int32) + ms since the start of the current month (int32) + counter (int16).
 */
const HEX2: string[] = [];
for (let i = 0; i < 256; i++) HEX2[i] = (i < 16 ? '0' : '') + i.toString(16).toUpperCase();

/** Upper-case hex of b[start, end). */
export function hexUpper(b: Uint8Array, start = 0, end = b.length): string {
  let s = '';
  for (let i = start; i < end; i++) s += HEX2[b[i]!];
  return s;
}

const TWO_32 = 4294967296;

/** Upper-case hex of an int64 given as a safe integer (two's complement for negatives). */
export function hexInt64(n: number): string {
  const hi = Math.floor(n / TWO_32);
  const lo = n - hi * TWO_32;
  return hex8(hi) + hex8(lo);
}

const HEX_CODE: number[] = [];
for (let i = 0; i < 16; i++) HEX_CODE[i] = '0123456789ABCDEF'.charCodeAt(i);

/**
 * Upper-case hex of an int32's 32 bits, 8 characters, built as one string: decodeMessages makes
 * one per message (the low half of the offsetMsgId), where concatenating two-character pieces
 * allocated three intermediate strings.
 */
export function hex8(v: number): string {
  return String.fromCharCode(
    HEX_CODE[(v >>> 28) & 15]!,
    HEX_CODE[(v >>> 24) & 15]!,
    HEX_CODE[(v >>> 20) & 15]!,
    HEX_CODE[(v >>> 16) & 15]!,
    HEX_CODE[(v >>> 12) & 15]!,
    HEX_CODE[(v >>> 8) & 15]!,
    HEX_CODE[(v >>> 4) & 15]!,
    HEX_CODE[v & 15]!,
  );
}

/** The broker's message id for a message stored at `commitLogOffset` by `storeHost` ("ip:port"). */
export function createOffsetMsgId(storeHost: string, commitLogOffset: number): string {
  if (!Number.isSafeInteger(commitLogOffset)) {
    throw new ProtocolError(`commit-log offset ${commitLogOffset} is not a safe integer`, 0);
  }
  const addr = parseSocketAddress(storeHost);
  const b = new Uint8Array(addr.ip.length + 4);
  writeSocketAddress(b, 0, addr);
  return hexUpper(b) + hexInt64(commitLogOffset);
}

/** The parts of an offsetMsgId (the broker-made MSGID): the host that stored the message and its commit-log offset. */
export interface OffsetMsgId {
  /** "ip:port" or "[v6]:port" */
  storeHost: string;
  commitLogOffset: number;
}

/** Split an offsetMsgId (32 hex chars = IPv4, 56 = IPv6). Throws ProtocolError on anything else. */
export function decodeOffsetMsgId(id: string): OffsetMsgId {
  if ((id.length !== 32 && id.length !== 56) || !/^[0-9a-fA-F]+$/.test(id)) {
    throw new ProtocolError(`not an offset message id: ${JSON.stringify(id)}`, 0);
  }
  const b = Buffer.from(id, 'hex');
  const ipLength = id.length === 32 ? 4 : 16;
  const storeHost = formatSocketAddress(b, 0, ipLength);
  const p = ipLength + 4;
  const hi = b.readInt32BE(p);
  const lo = b.readUInt32BE(p + 4);
  // Narrowing point: commit-log offsets are byte positions, far below 2^53; reject anything else.
  if (hi > 0x1fffff || hi < -0x200000) {
    throw new ProtocolError(`commit-log offset in message id ${id} does not fit in 53 bits`, p);
  }
  return { storeHost, commitLogOffset: hi * TWO_32 + lo };
}

/** The parts of a UniqKeyGenerator's fixed prefix. */
export interface UniqKeyOptions {
  /**
   * IPv4 or IPv6 address of this host (pass the client IP).
   * @default "127.0.0.1"
   */
  ip?: string;
  /**
   * Process id written into the key (only its low 16 bits are kept, as Java does).
   * @default process.pid
   */
  pid?: number;
  /**
   * Stands in for Java's class-loader hash.
   * @default a random number, which keeps two processes apart
   */
  instanceHash?: number;
}

/**
 * Generates UNIQ_KEY ids like Java's MessageClientIDSetter: a fixed prefix per generator, then the
 * milliseconds since the start of the current month (local time) and a wrapping 16-bit counter.
 */
export class UniqKeyGenerator {
  private readonly prefix: string;
  private counter = 0;
  private monthStart = 0;
  private nextMonthStart = 0;

  constructor(options: UniqKeyOptions = {}) {
    const ipText = options.ip ?? '127.0.0.1';
    const addr = parseSocketAddress(ipText.includes(':') && !ipText.startsWith('[') ? `[${ipText}]:0` : `${ipText}:0`);
    const pid = options.pid ?? (typeof process !== 'undefined' ? process.pid : 0);
    const hash = options.instanceHash ?? (Math.random() * TWO_32) | 0;
    this.prefix = hexUpper(addr.ip) + HEX2[(pid >>> 8) & 0xff] + HEX2[pid & 0xff] + hex8(hash);
    this.counter = (Math.random() * 65536) | 0;
  }

  /** A new id; `now` (ms since epoch) defaults to Date.now(). */
  next(now: number = Date.now()): string {
    if (now >= this.nextMonthStart || now < this.monthStart) {
      const d = new Date(now);
      this.monthStart = new Date(d.getFullYear(), d.getMonth(), 1).getTime();
      this.nextMonthStart = new Date(d.getFullYear(), d.getMonth() + 1, 1).getTime();
    }
    const diff = now - this.monthStart;
    const c = this.counter;
    this.counter = (c + 1) & 0xffff;
    return this.prefix + hex8(diff) + HEX2[c >>> 8] + HEX2[c & 0xff];
  }
}

const generators = new Map<string, UniqKeyGenerator>();

/** A new UNIQ_KEY for a message sent from `ip` (default 127.0.0.1). */
export function createUniqKey(ip = '127.0.0.1', now?: number): string {
  let g = generators.get(ip);
  if (!g) {
    g = new UniqKeyGenerator({ ip });
    generators.set(ip, g);
  }
  return g.next(now);
}
