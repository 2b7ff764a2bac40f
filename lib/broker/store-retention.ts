import * as fs from 'node:fs';
import type { Clock } from '../clock.js';
import createDebug from '../debug.js';
import type { CommitLog } from './commit-log.js';
import { brokerOptionCheck } from './option-check.js';

const log = createDebug('rocketwire:broker');

/** Commit-log retention, as Java's CleanCommitLogService (option names and defaults are Java's MessageStoreConfig's). */
export interface RetentionOptions {
  /**
   * Hours a commit-log segment is kept after its last write (fractions allowed; Java takes whole
   * hours). 0 turns retention off.
   * @default 72
   */
  fileReservedTime?: number;
  /**
   * Hours of the day, local time, at which expired segments are deleted: "04", or several as "04;16".
   * @default "04"
   */
  deleteWhen?: string;
  /**
   * Percent of the store's disk in use above which expired segments are deleted at any hour; above
   * 85 % (Java's diskSpaceCleanForciblyRatio) the oldest are deleted whatever their age.
   * @default 75
   */
  diskMaxUsedSpaceRatio?: number;
  /**
   * Milliseconds between two looks of the cleaner.
   * @default 10000
   */
  cleanResourceInterval?: number;
}

/** Java's rocketmq.broker.diskSpaceCleanForciblyRatio: above this, age does not matter. */
const CLEAN_FORCIBLY_RATIO = 0.85;
/** Java's deleteFileBatchMax: segments deleted in one look at most. */
const DELETE_BATCH_MAX = 10;

/** Fraction of the partition holding `dir` in use, or -1 when it cannot be told (Java treats that as full). */
export function diskUsedRatio(dir: string): number {
  try {
    const s = fs.statfsSync(dir);
    if (s.blocks <= 0) return -1;
    return (s.blocks - s.bfree) / s.blocks;
  } catch {
    return -1;
  }
}

/** The hours a deleteWhen string names ("04;16" → {4, 16}); an hour out of 0–23 is ignored. */
export function deleteHours(when: string): Set<number> {
  const out = new Set<number>();
  for (const part of when.split(';')) {
    const h = Number(part.trim());
    if (part.trim() !== '' && Number.isInteger(h) && h >= 0 && h <= 23) out.add(h);
  }
  return out;
}

export interface CleanerHost {
  readonly commitLog: CommitLog;
  readonly clock: Clock;
  /** The store's disk use, 0–1 (diskUsedRatio by default). */
  readonly diskUsed: () => number;
  /** After segments went: trim consume queues and the key index below the new min offset. */
  readonly trimmed: (minOffset: number) => void;
}

/**
 * One look of the cleaner (Java's CleanCommitLogService#deleteExpiredFiles): when the hour is one
 * of deleteWhen, or the disk is fuller than diskMaxUsedSpaceRatio, the oldest segments whose last
 * write is older than fileReservedTime are deleted, oldest first, one after another, stopping at
 * the first still young (never one in the middle) and never the segment being written; above
 * 85 % disk use their age does not matter. At most 10 per look. Returns how many went.
 */
export function cleanExpiredSegments(host: CleanerHost, options: Required<RetentionOptions>): number {
  if (options.fileReservedTime <= 0) return 0;
  const now = host.clock.now();
  // the hour on this host's local time, as Java's UtilAll.isItTimeToDo reads it
  const hour = new Date(now).getHours();
  const timeUp = deleteHours(options.deleteWhen).has(hour);
  const used = host.diskUsed();
  const spaceFull = used < 0 || used > options.diskMaxUsedSpaceRatio / 100;
  const cleanAtOnce = used > CLEAN_FORCIBLY_RATIO;
  if (!timeUp && !spaceFull) return 0;
  const reservedMs = options.fileReservedTime * 3_600_000;
  let deleted = 0;
  for (const seg of host.commitLog.oldSegments()) {
    if (deleted >= DELETE_BATCH_MAX) break;
    if (!cleanAtOnce && now < seg.lastWriteAt + reservedMs) break;
    if (!host.commitLog.deleteOldestSegment()) break;
    deleted++;
    log(
      'retention: deleted commit-log segment %s (last written %d, %s)',
      seg.file,
      seg.lastWriteAt,
      cleanAtOnce ? 'disk nearly full' : 'expired',
    );
  }
  if (deleted > 0) host.trimmed(host.commitLog.minOffset);
  return deleted;
}

/** BrokerOptionError for a retention option out of range (startBroker checks them up front). */
export function checkRetention(o: RetentionOptions): void {
  if (o.fileReservedTime !== undefined) brokerOptionCheck.numberAtLeast('fileReservedTime', o.fileReservedTime, 0);
  if (o.diskMaxUsedSpaceRatio !== undefined)
    brokerOptionCheck.intIn('diskMaxUsedSpaceRatio', o.diskMaxUsedSpaceRatio, 1, 100);
  if (o.cleanResourceInterval !== undefined)
    brokerOptionCheck.intIn('cleanResourceInterval', o.cleanResourceInterval, 1, 2 ** 31 - 1);
  if (o.deleteWhen !== undefined) {
    const parts = typeof o.deleteWhen === 'string' ? o.deleteWhen.split(';') : [];
    if (parts.length === 0 || parts.length !== deleteHours(o.deleteWhen).size)
      throw brokerOptionCheck.error(
        'deleteWhen',
        `must be hours of the day 00 to 23 separated by ";" (e.g. "04" or "04;16"), got ${JSON.stringify(o.deleteWhen)}`,
      );
  }
}

/** Java's defaults for what was not given. */
export function retentionSettings(o: RetentionOptions = {}): Required<RetentionOptions> {
  return {
    fileReservedTime: o.fileReservedTime ?? 72,
    deleteWhen: o.deleteWhen ?? '04',
    diskMaxUsedSpaceRatio: o.diskMaxUsedSpaceRatio ?? 75,
    cleanResourceInterval: o.cleanResourceInterval ?? 10_000,
  };
}
