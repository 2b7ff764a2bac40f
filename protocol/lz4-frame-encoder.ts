import { xxhash32 } from './xxhash32.js';

/**
 * LZ4 frame encoder: what RocketMQ's Lz4Compressor (lz4-java's LZ4FrameOutputStream) writes and
 * its LZ4FrameInputStream reads. One frame: magic 0x184D2204 (LE), FLG = version 01 | independent
 * blocks | content checksum, BD = 4 MiB blocks, header checksum, then blocks (u32 LE size; bit 31
 * set = stored raw, used when compressing does not shrink the block), the end mark 0 and the
 * xxHash32 of the content. lz4-java refuses dependent blocks, so every block starts afresh.
 *
 * The block compressor is the greedy one of the LZ4 reference (hash of 4 bytes → last position,
 * one candidate, no lazy matching): correctness and a useful ratio over the last few percent.
 */
const MAGIC = 0x184d2204;
const BLOCK_MAX = 4 * 1024 * 1024;
const MIN_MATCH = 4;
/** The last 5 bytes of a block are literals, and no match starts in its last 12 (LZ4 block format). */
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const MAX_OFFSET = 65_535;
const HASH_LOG = 16;

function hash4(v: number): number {
  return Math.imul(v, 2654435761) >>> (32 - HASH_LOG);
}

function read32(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
}

/** Worst-case size of a compressed block of `n` bytes (LZ4_compressBound). */
export function lz4BlockBound(n: number): number {
  return n + Math.floor(n / 255) + 16;
}

/**
 * Compress src[start, end) as one LZ4 block into `dst` at `at`; returns the compressed length.
 * `dst` must have lz4BlockBound(end - start) bytes free. `table` is scratch of 2^16 entries.
 */
export function lz4CompressBlock(
  src: Uint8Array,
  start: number,
  end: number,
  dst: Uint8Array,
  at: number,
  table: Int32Array,
): number {
  table.fill(-1);
  let o = at;
  let anchor = start;
  const matchLimit = end - LAST_LITERALS;
  const last = end - MF_LIMIT;
  let i = start;
  // the reference compressor's acceleration: after 64 misses in a row it steps 2 bytes, then 3, …
  let misses = 1 << 6;
  while (i < last) {
    const seq = read32(src, i);
    const h = hash4(seq);
    const ref = table[h]!;
    table[h] = i;
    if (ref < start || i - ref > MAX_OFFSET || read32(src, ref) !== seq) {
      i += misses++ >>> 6;
      continue;
    }
    misses = 1 << 6;
    // extend the match forward, and backward over literals not yet written
    let mStart = i;
    let rStart = ref;
    while (mStart > anchor && rStart > start && src[mStart - 1] === src[rStart - 1]) {
      mStart--;
      rStart--;
    }
    let mEnd = i + MIN_MATCH;
    let rEnd = ref + MIN_MATCH;
    while (mEnd + 4 <= matchLimit && read32(src, mEnd) === read32(src, rEnd)) {
      mEnd += 4;
      rEnd += 4;
    }
    while (mEnd < matchLimit && src[mEnd] === src[rEnd]) {
      mEnd++;
      rEnd++;
    }
    o = writeSequence(src, anchor, mStart - anchor, mStart - rStart, mEnd - mStart, dst, o);
    anchor = mEnd;
    // index a position inside the match so that the next repeat finds it
    if (mEnd - 2 > i) table[hash4(read32(src, mEnd - 2))] = mEnd - 2;
    i = mEnd;
  }
  return writeLastLiterals(src, anchor, end - anchor, dst, o) - at;
}

function writeLength(dst: Uint8Array, o: number, n: number): number {
  while (n >= 255) {
    dst[o++] = 255;
    n -= 255;
  }
  dst[o++] = n;
  return o;
}

function writeSequence(
  src: Uint8Array,
  litStart: number,
  litLen: number,
  offset: number,
  matchLen: number,
  dst: Uint8Array,
  o: number,
): number {
  const ml = matchLen - MIN_MATCH;
  const token = o++;
  dst[token] = (Math.min(litLen, 15) << 4) | Math.min(ml, 15);
  if (litLen >= 15) o = writeLength(dst, o, litLen - 15);
  o = copyLiterals(src, litStart, litLen, dst, o);
  dst[o++] = offset & 0xff;
  dst[o++] = offset >>> 8;
  if (ml >= 15) o = writeLength(dst, o, ml - 15);
  return o;
}

function writeLastLiterals(src: Uint8Array, litStart: number, litLen: number, dst: Uint8Array, o: number): number {
  dst[o++] = Math.min(litLen, 15) << 4;
  if (litLen >= 15) o = writeLength(dst, o, litLen - 15);
  return copyLiterals(src, litStart, litLen, dst, o);
}

/** Short runs byte by byte: a subarray view per sequence costs more than the copy. */
function copyLiterals(src: Uint8Array, from: number, n: number, dst: Uint8Array, o: number): number {
  if (n < 32) {
    for (let k = 0; k < n; k++) dst[o + k] = src[from + k]!;
  } else dst.set(src.subarray(from, from + n), o);
  return o + n;
}

/** Compress `data` into one LZ4 frame (see the file comment for its layout). */
export function lz4FrameCompress(data: Uint8Array): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / BLOCK_MAX));
  // header 7, per block a size word and at worst its block bound, end mark 4, content checksum 4
  const out = Buffer.allocUnsafe(7 + blocks * 20 + data.length + Math.floor(data.length / 255) + 8);
  let p = 0;
  out.writeUInt32LE(MAGIC, p);
  out[p + 4] = 0x40 | 0x20 | 0x04; // version 01, independent blocks, content checksum
  out[p + 5] = 7 << 4; // 4 MiB blocks
  out[p + 6] = (xxhash32(out, p + 4, p + 6) >>> 8) & 0xff;
  p += 7;
  const table = new Int32Array(1 << HASH_LOG);
  for (let i = 0; i < data.length; i += BLOCK_MAX) {
    const n = Math.min(BLOCK_MAX, data.length - i);
    const len = lz4CompressBlock(data, i, i + n, out, p + 4, table);
    if (len < n) {
      out.writeUInt32LE(len, p);
      p += 4 + len;
    } else {
      // no gain: the block is stored raw (bit 31), as lz4-java does
      out.writeUInt32LE((0x80000000 | n) >>> 0, p);
      out.set(data.subarray(i, i + n), p + 4);
      p += 4 + n;
    }
  }
  out.writeUInt32LE(0, p);
  out.writeUInt32LE(xxhash32(data), p + 4);
  return out.subarray(0, p + 8);
}
