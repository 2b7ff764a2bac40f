import type { Clock } from '../clock.js';
import type { StoreWarn } from './atomic-file.js';
import type { MessageInner } from './message-record.js';
import type { RetentionOptions } from './store-retention.js';

/** What a tag code is computed from: a message to store, or a stored one read back. */
export type TaggedMessage = Pick<MessageInner, 'topic' | 'properties' | 'propertiesText'>;

/** Store statuses of a read; the names are what the broker sends as the pull response remark. */
export type GetMessageStatus =
  | 'FOUND'
  | 'NO_MATCHED_MESSAGE'
  | 'MESSAGE_WAS_REMOVING'
  | 'OFFSET_FOUND_NULL'
  | 'OFFSET_OVERFLOW_BADLY'
  | 'OFFSET_OVERFLOW_ONE'
  | 'OFFSET_TOO_SMALL'
  | 'NO_MATCHED_LOGIC_QUEUE'
  | 'NO_MESSAGE_IN_QUEUE';

export interface GetMessageResult {
  status: GetMessageStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  /** Stored records in queue order, adjacent ones in one buffer (views of the commit log when in memory). */
  records: Buffer[];
  bytes: number;
}

export type PutMessageStatus =
  | 'PUT_OK'
  | 'MESSAGE_ILLEGAL'
  | 'PROPERTIES_SIZE_EXCEEDED'
  | 'SERVICE_NOT_AVAILABLE'
  | 'WHEEL_TIMER_NOT_ENABLE';

export interface PutMessageResult {
  status: PutMessageStatus;
  remark?: string;
  /** One per message written, in order. */
  written: { physOffset: number; queueOffset: number; msgId: string; storeTimestamp: number }[];
}

/** Called after messages are written and indexed (long polling, delayed delivery). */
export type ArrivalListener = (topic: string, queueId: number, maxOffset: number, tagsCodes: number[]) => void;

export interface MessageStoreOptions {
  dir: string;
  /** "ip:port" or "[v6]:port" written into every record (socketAddressText). */
  storeHost: string;
  clock: Clock;
  /** Largest body accepted (Java maxMessageSize). Default 4 MiB. */
  maxMessageSize?: number;
  segmentSize?: number;
  cachedSegments?: number;
  /** How often consume queues are written behind. Default 500 ms. */
  flushIntervalMs?: number;
  /** Where start-up says what it found damaged and repaired (one line each). Default: stderr. */
  warn?: StoreWarn;
  /**
   * Consume-queue tag code of a message; SCHEDULE_TOPIC_XXXX stores the delivery time there instead.
   * Read its properties with propertyOf (message-record.ts) so a message stored as sent is not decoded.
   */
  tagsCode?: (inner: TaggedMessage, storeTimestamp: number) => number;
  /** Commit-log retention (store-retention.ts); Java's defaults. */
  retention?: RetentionOptions;
  /** The store disk's use, 0–1 (tests); default: statfs of the store folder. */
  diskUsedRatio?: () => number;
}

/** Per pull, like Java's store reading from memory: at most 32 messages / 256 KiB (first always taken). */
export const MAX_TRANSFER_COUNT = 32;
export const MAX_TRANSFER_BYTES = 256 * 1024;
