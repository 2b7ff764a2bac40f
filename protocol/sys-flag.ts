/**
 * Bit flags carried as plain ints: the stored message's / send header's SYSFLAG (MessageSysFlag),
 * the pull header's sysFlag (PullSysFlag) and topic permissions (PermName). Values as in Apache
 * RocketMQ 4.9 and 5.x (docs/protocol-facts.md#flags-and-enums).
 */
export const MessageSysFlag = {
  COMPRESSED_FLAG: 0x1,
  /** Set by the broker when the topic's filter type is MULTI_TAG. */
  MULTI_TAGS_FLAG: 0x2,
  TRANSACTION_NOT_TYPE: 0x0,
  TRANSACTION_PREPARED_TYPE: 0x4,
  TRANSACTION_COMMIT_TYPE: 0x8,
  TRANSACTION_ROLLBACK_TYPE: 0xc,
  /** Mask of the two transaction bits. */
  TRANSACTION_TYPE_MASK: 0xc,
  /** Born host stored as 16-byte IPv6 + port (20 bytes instead of 8). */
  BORNHOST_V6_FLAG: 0x10,
  /** Store host stored as 16-byte IPv6 + port. */
  STOREHOSTADDRESS_V6_FLAG: 0x20,
  /** 5.x auto-batch: an inner-batch message that must be unwrapped. */
  NEED_UNWRAP_FLAG: 0x40,
  /** 5.x auto-batch. */
  INNER_BATCH_FLAG: 0x80,
  /** Bits 8..10: compression codec, `(sysFlag & 0x700) >> 8` (4.9.4+). */
  COMPRESSION_TYPE_MASK: 0x700,
  COMPRESSION_LZ4_TYPE: 0x100,
  COMPRESSION_ZSTD_TYPE: 0x200,
  COMPRESSION_ZLIB_TYPE: 0x300,
} as const;

/**
 * Compression codecs by the value of SYSFLAG bits 8..10. 0 means ZLIB too (senders before 4.9.4).
 * The producer's `compressType` option takes one.
 * @category Producing
 */
export type CompressionType = 'ZLIB' | 'LZ4' | 'ZSTD';

/** Codec named by a sysFlag whose COMPRESSED bit is set; null for a value no RocketMQ version defines. */
export function compressionTypeOf(sysFlag: number): CompressionType | null {
  switch ((sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) >> 8) {
    case 0:
    case 3:
      return 'ZLIB';
    case 1:
      return 'LZ4';
    case 2:
      return 'ZSTD';
    default:
      return null;
  }
}

/** sysFlag bits (COMPRESSED + codec) a producer sets for a body compressed with `type`. */
export function compressionSysFlag(type: CompressionType): number {
  const codec =
    type === 'LZ4'
      ? MessageSysFlag.COMPRESSION_LZ4_TYPE
      : type === 'ZSTD'
        ? MessageSysFlag.COMPRESSION_ZSTD_TYPE
        : MessageSysFlag.COMPRESSION_ZLIB_TYPE;
  return MessageSysFlag.COMPRESSED_FLAG | codec;
}

/** Transaction bits of a sysFlag (one of the TRANSACTION_*_TYPE values). */
export function transactionType(sysFlag: number): number {
  return sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK;
}

/** Bits of PULL_MESSAGE's `sysFlag` header field: what the broker should do besides reading. */
export const PullSysFlag = {
  /** The broker should store the header's commitOffset for (group, topic, queueId). */
  FLAG_COMMIT_OFFSET: 0x1,
  /** The broker may hold the request (long polling) while nothing is available. */
  FLAG_SUSPEND: 0x2,
  /** The header's subscription/expressionType define the filter. */
  FLAG_SUBSCRIPTION: 0x4,
  /** Legacy class filter (filter servers). Do not use. */
  FLAG_CLASS_FILTER: 0x8,
  /** 5.x lite pull (code 361). */
  FLAG_LITE_PULL_MESSAGE: 0x10,
} as const;

/** The push consumer's pull sysFlag: commit? | SUSPEND | (subscription ? SUBSCRIPTION : 0). */
export function buildPullSysFlag(
  commitOffset: boolean,
  suspend: boolean,
  subscription: boolean,
  classFilter = false,
): number {
  return (
    (commitOffset ? PullSysFlag.FLAG_COMMIT_OFFSET : 0) |
    (suspend ? PullSysFlag.FLAG_SUSPEND : 0) |
    (subscription ? PullSysFlag.FLAG_SUBSCRIPTION : 0) |
    (classFilter ? PullSysFlag.FLAG_CLASS_FILTER : 0)
  );
}

/** sysFlag with FLAG_COMMIT_OFFSET cleared: what a client sends when pulling from a slave. */
export function clearCommitOffsetFlag(sysFlag: number): number {
  return sysFlag & ~PullSysFlag.FLAG_COMMIT_OFFSET;
}

/** Permission bits of a topic on a broker (QueueData.perm, CreateTopicRequestHeader.perm); 6 (read and write) is the usual value. */
export const PermName = {
  PERM_PRIORITY: 0x8,
  PERM_READ: 0x4,
  PERM_WRITE: 0x2,
  PERM_INHERIT: 0x1,
} as const;

/** Whether `perm` has PERM_READ: consumers may pull the topic's queues there. */
export function isReadable(perm: number): boolean {
  return (perm & PermName.PERM_READ) === PermName.PERM_READ;
}
/** Whether `perm` has PERM_WRITE: producers may send to the topic's queues there. */
export function isWriteable(perm: number): boolean {
  return (perm & PermName.PERM_WRITE) === PermName.PERM_WRITE;
}
/** Whether `perm` has PERM_INHERIT: the mark of a default topic (TBW102) that a broker may auto-create other topics from. */
export function isInherited(perm: number): boolean {
  return (perm & PermName.PERM_INHERIT) === PermName.PERM_INHERIT;
}
/** Java's PermName.perm2String: "RWX" style with '-' for unset bits (R=read, W=write, X=inherit). */
export function perm2String(perm: number): string {
  return (isReadable(perm) ? 'R' : '-') + (isWriteable(perm) ? 'W' : '-') + (isInherited(perm) ? 'X' : '-');
}
