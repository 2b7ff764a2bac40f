import { deflateSync, inflateSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import { ProtocolError, UnsupportedCompressionError } from './errors.js';
import { lz4FrameDecompress, lz4FrameStore } from './lz4-frame.js';
import { compressionTypeOf, type CompressionType } from './sys-flag.js';

/**
 * Message body compression (§7.4): ZLIB = zlib stream (Java Deflater), LZ4 = LZ4 *frame* format,
 * ZSTD = zstd frame. zlib runs through node:zlib's synchronous calls (pure computation, no I/O);
 * LZ4 frames are decoded by our own lz4-frame.ts; zstd by `fzstd`, a small dependency-free
 * pure-JS decoder, because a zstd decoder (FSE + Huffman) is a lot of code to own for a codec
 * that RocketMQ users rarely pick.
 */

/** Largest body we inflate: Java's default maxMessageSize is 4 MiB; leave generous headroom. */
export const MAX_DECOMPRESSED_BODY = 64 * 1024 * 1024;

/** Decompress `body` whose message sysFlag has COMPRESSED set. `offset` locates errors. */
export function decompressBody(body: Uint8Array, sysFlag: number, offset = 0): Buffer {
  const type = compressionTypeOf(sysFlag);
  if (type === null) throw new UnsupportedCompressionError(`compression type ${(sysFlag >> 8) & 7}`, offset);
  return decompress(body, type, offset);
}

/**
 * Decompress a message body of compression `type` (ZLIB and LZ4 to at most MAX_DECOMPRESSED_BODY,
 * 64 MiB); a corrupt or oversized body throws a ProtocolError whose offset counts from `offset`.
 */
export function decompress(body: Uint8Array, type: CompressionType, offset = 0): Buffer {
  try {
    switch (type) {
      case 'ZLIB':
        return inflateSync(body, { maxOutputLength: MAX_DECOMPRESSED_BODY });
      case 'LZ4':
        return lz4FrameDecompress(body, { maxOutputLength: MAX_DECOMPRESSED_BODY });
      case 'ZSTD': {
        const u = zstdDecompress(body);
        return Buffer.from(u.buffer, u.byteOffset, u.length);
      }
    }
  } catch (err) {
    if (err instanceof ProtocolError) {
      throw new ProtocolError(`${type} body: ${err.message}`, offset + err.offset, { cause: err });
    }
    throw new ProtocolError(`${type} body cannot be decompressed: ${(err as Error).message}`, offset, { cause: err });
  }
  throw new UnsupportedCompressionError(String(type), offset);
}

/** How compress compresses a body. */
export interface CompressOptions {
  /** zlib level, Java default 5 (rocketmq.message.compressLevel). */
  level?: number;
}

/**
 * Compress a body as a Java producer would. ZLIB uses node:zlib; LZ4 writes a valid frame of
 * stored blocks (readers accept it, it just does not shrink); ZSTD is not offered.
 */
export function compress(body: Uint8Array, type: CompressionType, options: CompressOptions = {}): Buffer {
  switch (type) {
    case 'ZLIB':
      return deflateSync(body, { level: options.level ?? 5 });
    case 'LZ4':
      return lz4FrameStore(body);
    default:
      throw new UnsupportedCompressionError(type, 0, `rocketwire cannot compress message bodies with ${type}`);
  }
}
