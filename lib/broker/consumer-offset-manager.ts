import * as path from 'node:path';
import createDebug from '../debug.js';
import { decodeConsumerOffsetFile, encodeConsumerOffsetFile } from '../../protocol/index.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from './atomic-file.js';
import { Unsaved } from './unsaved.js';

const log = createDebug('rocketwire:broker');

/**
 * Committed consumer offsets: "<topic>@<group>" → queueId → next offset to consume. Persisted to
 * `<store>/config/consumerOffset.json` in the 4.9 broker's layout (tab-indented, unquoted integer
 * keys); reads that layout and standard JSON. Each write keeps the previous file as `.bak`, and a
 * file that could not be loaded is never written over: load() throws ConfigFileError instead, and
 * persist() does nothing until a load succeeded.
 */
export class ConsumerOffsetManager {
  readonly file: string;
  private readonly table = new Map<string, Map<number, number>>();
  /** Changes not yet written (the owner wakes its persist task on them). */
  readonly unsaved = new Unsaved();
  /** False until load() succeeded: persist() must not replace a file nobody could read. */
  private loaded = false;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'consumerOffset.json');
  }

  /** Read the file (or its .bak); throws ConfigFileError when neither can be read. */
  load(): void {
    const file = loadConfigFile(this.file, decodeConsumerOffsetFile, this.warn);
    if (file) for (const [key, queues] of file.offsetTable) this.table.set(key, queues);
    this.loaded = true;
  }

  /** Store an offset; like Java, a smaller value than the stored one still overwrites it. */
  commit(group: string, topic: string, queueId: number, offset: number): void {
    // an offset the file cannot hold exactly would make the next start refuse the whole file
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(queueId)) {
      log('offset %s of %s@%s queue %s refused: not a safe integer', offset, topic, group, queueId);
      return;
    }
    const key = `${topic}@${group}`;
    let m = this.table.get(key);
    if (!m) {
      m = new Map();
      this.table.set(key, m);
    }
    const prev = m.get(queueId);
    if (prev !== undefined && offset < prev)
      log('offset of %s queue %d goes back from %d to %d', key, queueId, prev, offset);
    if (prev === offset) return; // a consumer commits every few seconds while idle: nothing to rewrite
    m.set(queueId, offset);
    this.unsaved.mark();
  }

  /** The committed offset, or undefined when none. */
  query(group: string, topic: string, queueId: number): number | undefined {
    return this.table.get(`${topic}@${group}`)?.get(queueId);
  }

  /** Every group with committed offsets (admin group list). */
  groups(): Set<string> {
    const out = new Set<string>();
    for (const key of this.table.keys()) out.add(key.slice(key.lastIndexOf('@') + 1));
    return out;
  }

  /** Forget every offset of a group (DELETE_SUBSCRIPTIONGROUP with cleanOffset). */
  removeGroup(group: string): void {
    for (const key of [...this.table.keys()])
      if (key.slice(key.lastIndexOf('@') + 1) === group) {
        this.table.delete(key);
        this.unsaved.mark();
      }
  }

  /** Every group with committed offsets of `topic` (ConsumerOffsetManager.whichGroupByTopic). */
  groupsOf(topic: string): Set<string> {
    const out = new Set<string>();
    for (const key of this.table.keys()) {
      const at = key.lastIndexOf('@');
      if (key.slice(0, at) === topic) out.add(key.slice(at + 1));
    }
    return out;
  }

  /** All offsets of a group, "topic" → queueId → offset. */
  groupOffsets(group: string): Map<string, Map<number, number>> {
    const out = new Map<string, Map<number, number>>();
    for (const [key, m] of this.table) {
      const at = key.lastIndexOf('@');
      if (key.slice(at + 1) === group) out.set(key.slice(0, at), new Map(m));
    }
    return out;
  }

  /**
   * Say (through warn) which committed offsets lie past their queue's max offset after a restart:
   * the messages they counted are gone from the store, and a consumer would see no lag.
   */
  reportPastMax(maxOffset: (topic: string, queueId: number) => number): number {
    let n = 0;
    for (const [key, queues] of this.table) {
      const at = key.lastIndexOf('@');
      const topic = key.slice(0, at);
      for (const [queueId, offset] of queues) {
        const max = maxOffset(topic, queueId);
        if (offset <= max) continue;
        if (n++ < 20)
          this.warn(
            `committed offset ${offset} of ${key} queue ${queueId} is past the queue's max offset ${max}: messages it counted are no longer in the store`,
          );
      }
    }
    if (n > 20) this.warn(`… and ${n - 20} more committed offsets past their queue's max offset`);
    return n;
  }

  /** The file text: fastjson's pretty format with unquoted integer keys (what a 4.9 broker writes). */
  encode(): string {
    return encodeConsumerOffsetFile({ offsetTable: this.table });
  }

  /** Write the file atomically if anything changed (or when `force`). */
  persist(force = false): void {
    if (!this.loaded || (!this.unsaved.value && !force)) return;
    try {
      writeFileAtomic(this.file, this.encode(), true, true);
      this.unsaved.clear();
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }
}
