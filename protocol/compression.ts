import { createRequire } from 'node:module';
import { InflatedBodyTooLargeError, ProtocolError, UnsupportedCompressionError } from './errors.js';
import { lz4FrameDecompress } from './lz4-frame.js';
import { compressionTypeOf, type CompressionType } from './sys-flag.js';

// node:zlib and fzstd are required on the first compressed body, not when the package is imported
// (import cost). fzstd's CommonJS build: a synchronous require, as decoding is synchronous.
const requireHere = createRequire(import.meta.url);
let zlibModule: typeof import('node:zlib') | undefined;
export const zlib = (): typeof import('node:zlib') =>
  (zlibModule ??= requireHere('node:zlib') as typeof import('node:zlib'));
let zstdDecompress: typeof import('fzstd').decompress | undefined;

/**
 * Message body compression
 * (docs/protocol-facts.md#what-a-producer-sends): ZLIB = zlib stream (Java Deflater), LZ4 = LZ4 *frame* format,
 * ZSTD = zstd frame. zlib runs through node:zlib's synchronous calls (pure computation, no I/O);
 * LZ4 frames are decoded by our own lz4-frame.ts; zstd by `fzstd`, a small dependency-free
 * pure-JS decoder, because a zstd decoder (FSE + Huffman) is a lot of code to own for a codec
 * that RocketMQ users rarely pick.
 */

/**
 * Largest body we inflate by default: Java's default maxMessageSize is 4 MiB; leave generous
 * headroom. The consumers' `maxInflatedBodyBytes` option defaults to it.
 */
export const MAX_DECOMPRESSED_BODY = 64 * 1024 * 1024;

/** node:zlib's default output chunk, the least inflateChunkBytes gives. */
const MIN_INFLATE_CHUNK = 16 * 1024;
/** The most inflateChunkBytes gives. */
const MAX_INFLATE_CHUNK = 1024 * 1024;

/**
 * node:zlib's output chunk for a body of `compressed` bytes: node inflates into chunks of this size
 * and joins them; a JSON body of 1 to 4 MiB costs 15–30 % more CPU in its default 16 KiB chunks than
 * in chunks of a few hundred KiB (bench/codec/inflate.ts). The chunk grows with the compressed size but never past
 * it, nor past the output limit: a body inflates to at least about its compressed size, so it fills
 * its chunks and node joins them into a buffer of the body's own size (a body inflated in one chunk
 * is a view of it, which a larger chunk would leave mostly empty).
 */
function inflateChunkBytes(compressed: number, maxOutputLength: number): number {
  let chunk = MIN_INFLATE_CHUNK;
  while (chunk < MAX_INFLATE_CHUNK && chunk * 2 <= compressed && chunk * 2 <= maxOutputLength) chunk *= 2;
  return chunk;
}

/**
 * Decompress `body` whose message sysFlag has COMPRESSED set, to at most `maxOutputLength` bytes
 * (default MAX_DECOMPRESSED_BODY). `offset` locates errors.
 */
export function decompressBody(
  body: Uint8Array,
  sysFlag: number,
  offset = 0,
  maxOutputLength = MAX_DECOMPRESSED_BODY,
): Buffer {
  const type = compressionTypeOf(sysFlag);
  if (type === null) throw new UnsupportedCompressionError(`compression type ${(sysFlag >> 8) & 7}`, offset);
  return decompress(body, type, offset, maxOutputLength);
}

/**
 * Decompress a message body of compression `type` (ZLIB, LZ4 and ZSTD to at most `maxOutputLength`
 * bytes, default MAX_DECOMPRESSED_BODY, 64 MiB). A body that would inflate past the limit throws an
 * InflatedBodyTooLargeError before more than the limit is allocated; a corrupt one throws a
 * ProtocolError. Offsets count from `offset`.
 */
export function decompress(
  body: Uint8Array,
  type: CompressionType,
  offset = 0,
  maxOutputLength = MAX_DECOMPRESSED_BODY,
): Buffer {
  const max = maxOutputLength;
  try {
    switch (type) {
      case 'ZLIB':
        try {
          return zlib().inflateSync(body, { maxOutputLength: max, chunkSize: inflateChunkBytes(body.length, max) });
        } catch (err) {
          // node:zlib stops once its output would pass maxOutputLength and says so with this code
          if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
            throw new InflatedBodyTooLargeError(type, max, 0, undefined, { cause: err });
          throw err;
        }
      case 'LZ4':
        return lz4FrameDecompress(body, { maxOutputLength: max });
      case 'ZSTD': {
        // fzstd takes no output limit and allocates what a frame header declares (up to 2 GiB):
        // the frames are walked first and refused when they could exceed the limit.
        checkZstdBound(body, max);
        zstdDecompress ??= (requireHere('fzstd') as typeof import('fzstd')).decompress;
        const u = zstdDecompress(body);
        return Buffer.from(u.buffer, u.byteOffset, u.length);
      }
    }
  } catch (err) {
    if (err instanceof InflatedBodyTooLargeError) {
      throw offset === 0
        ? err
        : new InflatedBodyTooLargeError(type, max, offset + err.offset, err.what, { cause: err });
    }
    if (err instanceof ProtocolError) {
      throw new ProtocolError(`${type} body: ${err.message}`, offset + err.offset, { cause: err });
    }
    throw new ProtocolError(`${type} body cannot be decompressed: ${(err as Error).message}`, offset, { cause: err });
  }
  throw new UnsupportedCompressionError(String(type), offset);
}

/** The largest block a zstd frame may hold (RFC 8878 Block_Maximum_Size, 128 KiB). */
const ZSTD_MAX_BLOCK = 128 * 1024;

/**
 * Walks the zstd frames of `body` (RFC 8878: frame header, block headers, checksum; skippable
 * frames skipped) without decoding them and throws a ProtocolError when a frame declares a window
 * or content size over `max`, or when the frames' blocks could decompress to more than `max` bytes
 * together (raw and RLE blocks by their size, a compressed block by the block maximum). A
 * truncated frame is left to the decoder, which reports it.
 */
function checkZstdBound(body: Uint8Array, max: number): void {
  const tooBig = (what: string, at: number): ProtocolError => new InflatedBodyTooLargeError('ZSTD', max, at, what);
  let p = 0;
  let bound = 0;
  while (p + 4 <= body.length) {
    const magic = (body[p]! | (body[p + 1]! << 8) | (body[p + 2]! << 16) | (body[p + 3]! << 24)) >>> 0;
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // a skippable frame: 4-byte size, then that many bytes
      if (p + 8 > body.length) return;
      p += 8 + ((body[p + 4]! | (body[p + 5]! << 8) | (body[p + 6]! << 16) | (body[p + 7]! << 24)) >>> 0);
      continue;
    }
    if (magic !== 0xfd2fb528 || p + 5 > body.length) return; // not zstd: the decoder says so
    const frame = p;
    const fhd = body[p + 4]!;
    const singleSegment = (fhd >> 5) & 1;
    const checksum = (fhd >> 2) & 1;
    const dictBytes = [0, 1, 2, 4][fhd & 3]!;
    const fcsFlag = fhd >> 6;
    const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
    p += 5;
    let window = 0;
    if (!singleSegment) {
      if (p >= body.length) return;
      const wd = body[p++]!;
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    p += dictBytes;
    if (p + fcsBytes > body.length) return;
    let contentSize = 0;
    for (let i = fcsBytes - 1; i >= 0; i--) contentSize = contentSize * 256 + body[p + i]!;
    if (fcsBytes === 2) contentSize += 256;
    p += fcsBytes;
    if (window > max) throw tooBig(`a frame's window (${window} bytes)`, frame);
    if (contentSize > max) throw tooBig(`a frame's content size (${contentSize} bytes)`, frame);
    const blockMax = Math.min(ZSTD_MAX_BLOCK, singleSegment ? contentSize : window);
    for (;;) {
      if (p + 3 > body.length) return;
      const h = body[p]! | (body[p + 1]! << 8) | (body[p + 2]! << 16);
      p += 3;
      const last = h & 1;
      const type = (h >> 1) & 3;
      const size = h >>> 3;
      // raw: `size` bytes out of `size` in; RLE: `size` bytes out of 1 in; compressed: at most the block maximum
      bound += type === 2 ? blockMax : size;
      if (bound > max) throw tooBig("the frames' blocks", frame);
      p += type === 1 ? 1 : size;
      if (last) break;
    }
    p += checksum * 4;
  }
}
