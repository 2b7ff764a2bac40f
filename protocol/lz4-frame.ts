import { InflatedBodyTooLargeError, ProtocolError } from './errors.js';
import { xxhash32 } from './xxhash32.js';

/**
 * LZ4 frame format decoder (what lz4-java's LZ4FrameOutputStream writes for RocketMQ's LZ4
 * compression type). Frame: magic 0x184D2204 (LE) | FLG | BD | [content size u64] | [dict id u32]
 * | HC | blocks { u32 LE size (bit 31 = stored raw; 0 = end mark) data [u32 block checksum] }
 * | [u32 content checksum]. Several frames may follow each other; skippable frames are skipped.
 * Blocks are decoded into one output so dependent blocks (B.Indep = 0) can refer back.
 * Errors are ProtocolErrors whose offset is relative to the start of `src`.
 */
const MAGIC = 0x184d2204;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE = 0x184d2a50;

export interface Lz4DecodeOptions {
  /** Check the content and block xxHash32 checksums when the frame has them. Default true. */
  verifyChecksum?: boolean;
  /** Refuse to produce more than this many bytes (default 64 MiB: a message is at most 4 MiB). */
  maxOutputLength?: number;
}

function u32(b: Uint8Array, i: number): number {
  return (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;
}

class Output {
  buf: Uint8Array;
  len = 0;
  constructor(
    initial: number,
    private readonly max: number,
  ) {
    this.buf = new Uint8Array(Math.max(64, Math.min(initial, max)));
  }
  reserve(n: number, at: number): void {
    const need = this.len + n;
    if (need > this.max) throw new InflatedBodyTooLargeError('LZ4', this.max, at);
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(Math.min(cap, this.max));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}

/** Decode every LZ4 frame in `src`. */
export function lz4FrameDecompress(src: Uint8Array, options: Lz4DecodeOptions = {}): Buffer {
  const verify = options.verifyChecksum ?? true;
  const max = options.maxOutputLength ?? 64 * 1024 * 1024;
  const out = new Output(src.length * 4, max);
  let p = 0;
  let frames = 0;
  while (p < src.length) {
    if (src.length - p < 4) throw new ProtocolError('LZ4 frame: truncated magic', p);
    const magic = u32(src, p);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE) {
      if (src.length - p < 8) throw new ProtocolError('LZ4 skippable frame: truncated size', p);
      const size = u32(src, p + 4);
      if (size > src.length - p - 8) throw new ProtocolError('LZ4 skippable frame: truncated', p);
      p += 8 + size;
      continue;
    }
    if (magic !== MAGIC) throw new ProtocolError(`LZ4 frame: bad magic 0x${magic.toString(16)}`, p);
    p = decodeFrame(src, p, out, verify);
    frames++;
  }
  if (frames === 0) throw new ProtocolError('LZ4 frame: no frame in input', 0);
  return Buffer.from(out.buf.buffer, out.buf.byteOffset, out.len);
}

function decodeFrame(src: Uint8Array, start: number, out: Output, verify: boolean): number {
  let p = start + 4;
  if (src.length - p < 3) throw new ProtocolError('LZ4 frame: truncated descriptor', p);
  const flg = src[p]!;
  const bd = src[p + 1]!;
  if (flg >> 6 !== 1) throw new ProtocolError(`LZ4 frame: unsupported version ${flg >> 6}`, p);
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) throw new ProtocolError('LZ4 frame: reserved bits set', p);
  const blockChecksum = (flg & 0x10) !== 0;
  const hasContentSize = (flg & 0x08) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  const hasDictId = (flg & 0x01) !== 0;
  const blockMaxCode = (bd >> 4) & 7;
  if (blockMaxCode < 4) throw new ProtocolError(`LZ4 frame: bad block max size code ${blockMaxCode}`, p + 1);
  const blockMax = 1 << (2 * blockMaxCode + 8);
  const descLen = 2 + (hasContentSize ? 8 : 0) + (hasDictId ? 4 : 0);
  if (src.length - p < descLen + 1) throw new ProtocolError('LZ4 frame: truncated descriptor', p);
  if (hasDictId) throw new ProtocolError('LZ4 frame: dictionaries are not supported', p);
  const hc = src[p + descLen]!;
  if (((xxhash32(src, p, p + descLen) >>> 8) & 0xff) !== hc) {
    throw new ProtocolError('LZ4 frame: header checksum mismatch', p + descLen);
  }
  let contentSize = -1;
  if (hasContentSize) {
    const lo = u32(src, p + 2);
    const hi = u32(src, p + 6);
    contentSize = hi * 4294967296 + lo;
    out.reserve(Math.min(contentSize, Number.MAX_SAFE_INTEGER), p + 2);
  }
  p += descLen + 1;
  const frameOutStart = out.len;
  for (;;) {
    if (src.length - p < 4) throw new ProtocolError('LZ4 frame: truncated block size', p);
    const word = u32(src, p);
    p += 4;
    if (word === 0) break;
    const raw = (word & 0x80000000) !== 0;
    const size = word & 0x7fffffff;
    if (size > blockMax) throw new ProtocolError(`LZ4 frame: block of ${size} bytes exceeds ${blockMax}`, p - 4);
    if (size > src.length - p - (blockChecksum ? 4 : 0)) throw new ProtocolError('LZ4 frame: truncated block', p);
    if (blockChecksum) {
      if (verify && xxhash32(src, p, p + size) !== u32(src, p + size)) {
        throw new ProtocolError('LZ4 frame: block checksum mismatch', p + size);
      }
    }
    if (raw) {
      out.reserve(size, p);
      out.buf.set(src.subarray(p, p + size), out.len);
      out.len += size;
    } else {
      decodeBlock(src, p, p + size, out, frameOutStart, blockMax);
    }
    p += size + (blockChecksum ? 4 : 0);
  }
  if (contentSize >= 0 && out.len - frameOutStart !== contentSize) {
    throw new ProtocolError(
      `LZ4 frame: content size ${out.len - frameOutStart} differs from declared ${contentSize}`,
      p,
    );
  }
  if (contentChecksum) {
    if (src.length - p < 4) throw new ProtocolError('LZ4 frame: truncated content checksum', p);
    if (verify && xxhash32(out.buf, frameOutStart, out.len) !== u32(src, p)) {
      throw new ProtocolError('LZ4 frame: content checksum mismatch', p);
    }
    p += 4;
  }
  return p;
}

/**
 * Decode one LZ4 block src[p, end) by appending to `out`; matches may reach back to `floor`.
 * The output grows on demand (doubling) rather than by the frame's block maximum: lz4-java writes
 * 4 MiB blocks, and reserving that for every small message body would dominate the cost.
 */
function decodeBlock(src: Uint8Array, p: number, end: number, out: Output, floor: number, blockMax: number): void {
  let dst = out.buf;
  let o = out.len;
  const limit = o + blockMax;
  while (p < end) {
    const token = src[p++]!;
    let lit = token >>> 4;
    if (lit === 15) {
      let b: number;
      do {
        if (p >= end) throw new ProtocolError('LZ4 block: truncated literal length', p);
        b = src[p++]!;
        lit += b;
      } while (b === 255);
    }
    if (lit > end - p) throw new ProtocolError('LZ4 block: literals run past the block', p);
    if (lit > limit - o) throw new ProtocolError('LZ4 block: output exceeds the block size', p);
    if (o + lit > dst.length) {
      out.len = o;
      out.reserve(lit, p);
      dst = out.buf;
    }
    if (lit < 16) {
      for (let i = 0; i < lit; i++) dst[o + i] = src[p + i]!;
    } else {
      dst.set(src.subarray(p, p + lit), o);
    }
    o += lit;
    p += lit;
    if (p === end) break; // the last sequence has literals only
    if (end - p < 2) throw new ProtocolError('LZ4 block: truncated match offset', p);
    const offset = src[p]! | (src[p + 1]! << 8);
    p += 2;
    if (offset === 0 || offset > o - floor) throw new ProtocolError(`LZ4 block: bad match offset ${offset}`, p - 2);
    let mlen = token & 15;
    if (mlen === 15) {
      let b: number;
      do {
        if (p >= end) throw new ProtocolError('LZ4 block: truncated match length', p);
        b = src[p++]!;
        mlen += b;
      } while (b === 255);
    }
    mlen += 4;
    if (mlen > limit - o) throw new ProtocolError('LZ4 block: output exceeds the block size', p);
    if (o + mlen > dst.length) {
      out.len = o;
      out.reserve(mlen, p);
      dst = out.buf;
    }
    let m = o - offset;
    if (offset >= mlen) {
      dst.copyWithin(o, m, m + mlen);
      o += mlen;
    } else {
      // Overlapping copy repeats the pattern byte by byte, as the format intends.
      for (let i = 0; i < mlen; i++) dst[o++] = dst[m++]!;
    }
  }
  out.len = o;
}

/**
 * Encode `data` as one LZ4 frame holding stored (uncompressed) blocks, with content size and
 * checksum. Valid for every LZ4 frame reader; used by tests and by a producer that is asked for
 * LZ4 but should not spend CPU on it.
 */
export function lz4FrameStore(data: Uint8Array): Buffer {
  const blockMax = 4 * 1024 * 1024;
  const blocks = Math.ceil(data.length / blockMax);
  const out = Buffer.allocUnsafe(4 + 2 + 8 + 1 + blocks * 4 + data.length + 4 + 4);
  let p = 0;
  out.writeUInt32LE(MAGIC, p);
  p += 4;
  out[p] = 0x40 | 0x20 | 0x08 | 0x04; // version 01, independent blocks, content size, content checksum
  out[p + 1] = 7 << 4; // 4 MiB blocks
  out.writeUInt32LE(data.length >>> 0, p + 2);
  out.writeUInt32LE(Math.floor(data.length / 4294967296), p + 6);
  out[p + 10] = (xxhash32(out, p, p + 10) >>> 8) & 0xff;
  p += 11;
  for (let i = 0; i < data.length; i += blockMax) {
    const n = Math.min(blockMax, data.length - i);
    out.writeUInt32LE((0x80000000 | n) >>> 0, p);
    p += 4;
    out.set(data.subarray(i, i + n), p);
    p += n;
  }
  out.writeUInt32LE(0, p);
  p += 4;
  out.writeUInt32LE(xxhash32(data), p);
  p += 4;
  return out.subarray(0, p);
}
