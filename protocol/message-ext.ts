/**
 * A stored message as a consumer receives it (MessageExt in Java), decoded from the commit-log
 * record of §7.1. `body` is a view into the pull response body unless it was decompressed.
 */
export interface MessageExt {
  topic: string;
  queueId: number;
  /** The producer's user flag. */
  flag: number;
  /** Logical offset in the consume queue: what consumers commit and pull by. */
  queueOffset: number;
  /** Physical byte offset in the commit log: used by msgIds, send-back and view-by-id. */
  commitLogOffset: number;
  /** MessageSysFlag bits; COMPRESSED is cleared once the body has been decompressed. */
  sysFlag: number;
  bornTimestamp: number;
  /** "ip:port" or "[v6]:port" */
  bornHost: string;
  storeTimestamp: number;
  /** "ip:port" or "[v6]:port" of the broker that stored the message. */
  storeHost: string;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  /** CRC-32 (masked 0x7FFFFFFF) of the body as stored, i.e. before decompression. */
  bodyCRC: number;
  /** Size of the whole stored record, including its own 4 length bytes. */
  storeSize: number;
  properties: Record<string, string>;
  body: Buffer;
  /** UNIQ_KEY when the producer set one, else offsetMsgId. */
  msgId: string;
  offsetMsgId: string;
  /** Property TAGS, if any. */
  tags?: string | undefined;
  /** Property KEYS, if any (space-separated keys). */
  keys?: string | undefined;
  /** Set by the consumer: the broker name of the queue the message was pulled from. */
  brokerName?: string | undefined;
}

/** What the broker writes into a commit-log record (encodeStoredMessage). */
export interface StoredMessageInit {
  topic: string;
  queueId: number;
  flag?: number;
  queueOffset: number;
  commitLogOffset: number;
  /** MessageSysFlag bits; the two IPv6 host bits are set from the host addresses. */
  sysFlag?: number;
  bornTimestamp: number;
  /** "ip:port" or "[v6]:port" */
  bornHost: string;
  storeTimestamp: number;
  /** "ip:port" or "[v6]:port": the broker's reachable address (the offsetMsgId is derived from it). */
  storeHost: string;
  reconsumeTimes?: number;
  preparedTransactionOffset?: number;
  /** The body as stored (already compressed when sysFlag says so). */
  body: Uint8Array;
  /** A properties string (§7.3) or a map encoded in key order. */
  properties?: string | Readonly<Record<string, string>>;
  /** 1 or 2; default 2 only when the topic is longer than 127 UTF-8 bytes, as 5.x brokers do. */
  magic?: 1 | 2;
  /** Default: computed from `body`. */
  bodyCRC?: number;
}
