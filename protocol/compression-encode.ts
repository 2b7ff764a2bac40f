// The encoding side of message-body compression (what a producer writes), apart from
// compression.ts so that a reader (the consumer, the capture decoder) never loads the encoders.
import { UnsupportedCompressionError } from './errors.js';
import { zlib } from './compression.js';
import { lz4FrameCompress } from './lz4-frame-encoder.js';
import type { CompressionType } from './sys-flag.js';

/** How compress compresses a body. */
export interface CompressOptions {
  /**
   * Level (Java's rocketmq.message.compressLevel): zlib 0..9, zstd ZSTD_MIN_LEVEL..22; LZ4 has
   * none (lz4-java's frame stream takes no level, so Java ignores it too).
   * @default 5
   */
  level?: number;
}

/** The lowest zstd level (ZSTD_minCLevel: negative levels trade ratio for speed). */
export const ZSTD_MIN_LEVEL = -131072;
/** The highest zstd level (ZSTD_maxCLevel). */
export const ZSTD_MAX_LEVEL = 22;

/** What node:zlib offers for zstd from Node 22.15 / 23.8 on (typed here for older @types/node). */
interface ZlibWithZstd {
  zstdCompressSync?: (buf: Uint8Array, options?: { params?: Record<number, number> }) => Buffer;
  constants: { ZSTD_c_compressionLevel?: number };
}

/** Whether this runtime's node:zlib can write zstd (Node 22.15+ or 23.8+). */
export function zstdCompressionAvailable(): boolean {
  return typeof (zlib() as unknown as ZlibWithZstd).zstdCompressSync === 'function';
}

/** The Node versions whose node:zlib writes zstd, for error messages. */
export const ZSTD_NODE_VERSIONS = 'Node.js 22.15 or 23.8 and later';

/**
 * Compress a body as a Java producer's Compressor would (CompressorFactory): ZLIB is a zlib stream
 * at `level` (node:zlib, as java.util.zip.Deflater), LZ4 one LZ4 frame (lz4-frame-encoder.ts), ZSTD
 * one zstd frame at `level` through node:zlib where the runtime has it (zstdCompressionAvailable);
 * elsewhere ZSTD throws UnsupportedCompressionError.
 */
export function compress(body: Uint8Array, type: CompressionType, options: CompressOptions = {}): Buffer {
  const level = options.level ?? 5;
  switch (type) {
    case 'ZLIB':
      return zlib().deflateSync(body, { level });
    case 'LZ4':
      return lz4FrameCompress(body);
    case 'ZSTD': {
      const z = zlib() as unknown as ZlibWithZstd;
      if (typeof z.zstdCompressSync !== 'function') {
        throw new UnsupportedCompressionError(
          type,
          0,
          `this runtime (Node.js ${process.versions.node}) cannot compress with ZSTD: node:zlib has zstd from ${ZSTD_NODE_VERSIONS}`,
        );
      }
      return z.zstdCompressSync(body, { params: { [z.constants.ZSTD_c_compressionLevel ?? 100]: level } });
    }
    default:
      throw new UnsupportedCompressionError(String(type), 0, `rocketwire cannot compress message bodies with ${type}`);
  }
}
