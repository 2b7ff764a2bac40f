import {
  ZSTD_MAX_LEVEL,
  ZSTD_MIN_LEVEL,
  ZSTD_NODE_VERSIONS,
  compress,
  compressionSysFlag,
  zstdCompressionAvailable,
  type CompressionType,
} from '../../protocol/internal.js';
import type { OptionValidator } from '../validate.js';

/*
 * The producer's body compression, as DefaultMQProducer's compressType / compressLevel (Java takes
 * their defaults from the system properties rocketmq.message.compressType, default ZLIB, and
 * rocketmq.message.compressLevel, default 5). Bodies of at least compressMsgBodyOverHowmuch bytes
 * are compressed; the codec goes into sysFlag bits 8..10 beside COMPRESSED (CompressionType
 * #getCompressionFlag), which every consumer since 4.9.4 reads. Batches are never compressed, as
 * in Java (DefaultMQProducerImpl#tryToCompressMessage skips MessageBatch).
 */

/** The codecs a producer may compress with. */
export const COMPRESSION_TYPES: readonly CompressionType[] = ['ZLIB', 'LZ4', 'ZSTD'];

/** The valid levels of each codec; LZ4 takes none (lz4-java's frame stream has no level), so any zlib or zstd level passes. */
const LEVELS: Record<CompressionType, readonly [number, number]> = {
  ZLIB: [0, 9],
  ZSTD: [ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL],
  LZ4: [ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL],
};

/** The compressType and compressLevel options checked: the codec by name (any case, as CompressionType.of), its level range, and ZSTD's runtime. */
export function resolveCompression(
  check: OptionValidator,
  type: unknown,
  level: unknown,
): { compressType: CompressionType; compressLevel: number } {
  const name = typeof type === 'string' ? type.trim().toUpperCase() : type;
  const compressType = check.oneOf('compressType', name ?? 'ZLIB', COMPRESSION_TYPES);
  const [min, max] = LEVELS[compressType];
  const compressLevel = check.intIn('compressLevel', level ?? 5, min, max);
  // at construction, not at the first large body: a send must not fail for the runtime it runs on
  if (compressType === 'ZSTD' && !zstdCompressionAvailable()) {
    throw check.error(
      'compressType',
      `ZSTD needs node:zlib's zstd, which ${ZSTD_NODE_VERSIONS} have; this is Node.js ${process.versions.node}`,
    );
  }
  return { compressType, compressLevel };
}

/** A body compressed when it is large enough: the bytes to send and the sysFlag bits to add (0 when sent as is). */
export function compressBody(
  body: Buffer,
  options: { compressMsgBodyOverHowmuch: number; compressType: CompressionType; compressLevel: number },
): { body: Buffer; sysFlag: number } {
  if (body.length < options.compressMsgBodyOverHowmuch) return { body, sysFlag: 0 };
  return {
    body: compress(body, options.compressType, { level: options.compressLevel }),
    sysFlag: compressionSysFlag(options.compressType),
  };
}
