import type { MessageExt } from '../../protocol/index.js';
import { decodeMessage } from '../../protocol/index.js';
import type { StoreWarn } from './atomic-file.js';
import { readTextFile } from './atomic-file.js';
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueue } from './consume-queue.js';
import { StoreFileFormatError } from './errors.js';
import type { MessageStoreOptions } from './message-store-types.js';

/*
 * The message store's recovery at open: its checkpoint read back, and the commit log replayed into
 * the consume queues from where they are trusted.
 */

/** What a replay needs of the store. */
export interface ReplayHost {
  readonly commitLog: CommitLog;
  readonly queues: Map<string, ConsumeQueue>;
  queue(topic: string, queueId: number, create?: boolean): ConsumeQueue | undefined;
  readonly tagsCode: NonNullable<MessageStoreOptions['tagsCode']>;
  readonly warn: StoreWarn;
}

/** Lines about lost queue offsets said one by one before a summary. */
const MAX_GAP_LINES = 20;

/**
 * checkpoint.json: how far the commit log is indexed on disk and how many entries each consume
 * queue had then. Derived data: when it cannot be read, the whole commit log is indexed again.
 */
export function readStoreCheckpoint(
  checkpointFile: string,
  warn: StoreWarn,
): { dispatched: number; queues: Map<string, number> | null; unreadable: boolean } {
  let text: string | null;
  try {
    text = readTextFile(checkpointFile);
  } catch (err) {
    warn(`${checkpointFile} cannot be read (${(err as Error).message}); indexing the whole commit log again`);
    return { dispatched: 0, queues: null, unreadable: true };
  }
  if (text === null) return { dispatched: 0, queues: null, unreadable: false };
  try {
    const o = JSON.parse(text) as { dispatched?: unknown; queues?: unknown };
    if (typeof o.dispatched !== 'number' || !Number.isSafeInteger(o.dispatched) || o.dispatched < 0)
      throw new StoreFileFormatError('no "dispatched" offset');
    let queues: Map<string, number> | null = null;
    if (o.queues !== undefined) {
      if (typeof o.queues !== 'object' || o.queues === null || Array.isArray(o.queues))
        throw new StoreFileFormatError('"queues" is not an object');
      queues = new Map();
      for (const [k, v] of Object.entries(o.queues)) {
        if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
          throw new StoreFileFormatError(`"queues.${k}" is not a count`);
        queues.set(k, v);
      }
    }
    return { dispatched: o.dispatched, queues, unreadable: false };
  } catch (err) {
    warn(`${checkpointFile} cannot be read (${(err as Error).message}); indexing the whole commit log again`);
    return { dispatched: 0, queues: null, unreadable: true };
  }
}

/**
 * Index the commit log's records from `from`: a record whose queue offset a queue already has is
 * skipped, the next one is appended. A record whose queue offset is past the queue's end means
 * entries are missing: when the replay started at 0 (every record seen) their records are lost
 * and holes keep the offsets; otherwise the queue is indexed again in a second pass from 0.
 * Finally a queue shorter than the checkpoint recorded gets holes up to that count.
 */
export function replayCommitLog(
  host: ReplayHost,
  from: number,
  expected: Map<string, number> | null,
  holeBudget: number,
): { indexed: number; holes: number } {
  let indexed = 0;
  let holes = 0;
  let gaps = 0;
  const refused = new Set<string>();
  // a queue whose entries were trusted up to the replay's start has every record before it
  // indexed: a gap after that is a lost record, not a lost entry
  const complete = new Set<string>();
  for (const [key, cq] of host.queues)
    if (cq.indexedEnd >= from || (from === 0 && cq.maxOffset === 0)) complete.add(key);
  const pass = (start: number, only: Set<string> | null, deferred: Set<string> | null): void => {
    for (const { offset, record } of host.commitLog.records(start)) {
      let r: MessageExt;
      try {
        r = decodeMessage(record, 0, { decompress: false });
      } catch (err) {
        host.warn(
          `commit log: the record at ${offset} passed its checks but does not decode (${(err as Error).message}); not indexed`,
        );
        continue;
      }
      const key = `${r.topic}@${r.queueId}`;
      if ((only && !only.has(key)) || deferred?.has(key) || refused.has(r.topic)) continue;
      let cq: ConsumeQueue;
      try {
        cq = host.queue(r.topic, r.queueId, true)!;
      } catch (err) {
        refused.add(r.topic);
        host.warn(`commit log: records of topic ${JSON.stringify(r.topic)} are not indexed: ${(err as Error).message}`);
        continue;
      }
      if (cq.maxOffset > r.queueOffset) continue;
      if (cq.maxOffset < r.queueOffset) {
        if (deferred && !complete.has(key)) {
          deferred.add(key);
          continue;
        }
        if (r.queueOffset - cq.maxOffset > holeBudget - holes) {
          // the header fields outside the body have no checksum: a damaged queue offset must
          // not make the index grow by millions of holes
          host.warn(
            `commit log: the record at ${offset} claims queue offset ${r.queueOffset} of ${key}, which has ${cq.maxOffset} entries; more than the damage found can explain, so it is not indexed`,
          );
          continue;
        }
        if (++gaps <= MAX_GAP_LINES) {
          host.warn(
            `consume queue ${key}: queue offsets ${cq.maxOffset}..${r.queueOffset - 1} have no intact record in the commit log; consumers move past them`,
          );
        }
        while (cq.maxOffset < r.queueOffset) {
          cq.appendHole();
          holes++;
        }
      }
      cq.append(offset, r.storeSize, host.tagsCode(r, r.storeTimestamp));
      indexed++;
    }
  };
  const deferred = from > 0 ? new Set<string>() : null;
  pass(from, null, deferred);
  if (deferred && deferred.size > 0) {
    host.warn(
      `consume queues ${[...deferred].join(', ')} miss entries before the checkpoint; indexing them again from the start of the commit log`,
    );
    pass(0, deferred, null);
  }
  for (const [key, n] of expected ?? []) {
    const cq = host.queues.get(key);
    if (!cq || cq.maxOffset >= n) continue;
    if (n - cq.maxOffset > holeBudget - holes) {
      host.warn(
        `checkpoint.json: ${key} was recorded with ${n} entries, but the commit log holds ${cq.maxOffset} and the damage found explains fewer lost; not filling the difference`,
      );
      continue;
    }
    host.warn(
      `consume queue ${key}: queue offsets ${cq.maxOffset}..${n - 1} have no intact record in the commit log; consumers move past them`,
    );
    while (cq.maxOffset < n) {
      cq.appendHole();
      holes++;
    }
  }
  if (gaps > MAX_GAP_LINES) host.warn(`… and ${gaps - MAX_GAP_LINES} more runs of queue offsets with no intact record`);
  return { indexed, holes };
}
