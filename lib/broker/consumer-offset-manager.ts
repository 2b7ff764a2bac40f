import * as path from 'node:path';
import createDebug from 'debug';
import { readTextFile, writeFileAtomic } from './atomic-file.js';

const log = createDebug('rocketwire:broker');

/**
 * fastjson writes maps with integer keys unquoted ({0:120}); make such text standard JSON. Safe for
 * consumerOffset.json because its string keys ("topic@group") only hold [%|a-zA-Z0-9_@-].
 */
export function quoteNumericKeys(text: string): string {
  return text.replace(/([{,]\s*)(-?\d+)(\s*:)/g, '$1"$2"$3');
}

/**
 * Committed consumer offsets: "<topic>@<group>" → queueId → next offset to consume. Persisted to
 * `<store>/config/consumerOffset.json` in the 4.9 broker's layout (tab-indented, unquoted integer
 * keys); reads that layout and standard JSON.
 */
export class ConsumerOffsetManager {
  readonly file: string;
  private readonly table = new Map<string, Map<number, number>>();
  private dirty = false;

  constructor(storeDir: string) {
    this.file = path.join(storeDir, 'config', 'consumerOffset.json');
  }

  load(): void {
    const text = readTextFile(this.file);
    if (!text) return;
    try {
      const parsed = JSON.parse(quoteNumericKeys(text)) as { offsetTable?: Record<string, Record<string, number>> };
      for (const [key, queues] of Object.entries(parsed.offsetTable ?? {})) {
        const m = new Map<number, number>();
        for (const [q, off] of Object.entries(queues)) if (Number.isFinite(Number(q)) && typeof off === 'number') m.set(Number(q), off);
        this.table.set(key, m);
      }
    } catch (err) {
      log('cannot read %s: %s', this.file, (err as Error).message);
    }
  }

  /** Store an offset; like Java, a smaller value than the stored one still overwrites it. */
  commit(group: string, topic: string, queueId: number, offset: number): void {
    const key = `${topic}@${group}`;
    let m = this.table.get(key);
    if (!m) {
      m = new Map();
      this.table.set(key, m);
    }
    const prev = m.get(queueId);
    if (prev !== undefined && offset < prev) log('offset of %s queue %d goes back from %d to %d', key, queueId, prev, offset);
    m.set(queueId, offset);
    this.dirty = true;
  }

  /** The committed offset, or undefined when none. */
  query(group: string, topic: string, queueId: number): number | undefined {
    return this.table.get(`${topic}@${group}`)?.get(queueId);
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

  /** The file text: fastjson's pretty format with unquoted integer keys (what a 4.9 broker writes). */
  encode(): string {
    const parts: string[] = [];
    for (const [key, m] of this.table) {
      const entries = [...m.entries()].sort((a, b) => a[0] - b[0]).map(([q, o]) => `${q}:${o}`);
      parts.push(`\t\t${JSON.stringify(key)}:{${entries.join(',')}\n\t\t}`);
    }
    return `{\n\t"offsetTable":{${parts.length ? '\n' + parts.join(',\n') : ''}\n\t}\n}`;
  }

  /** Write the file atomically if anything changed (or when `force`). */
  persist(force = false): void {
    if (!this.dirty && !force) return;
    try {
      writeFileAtomic(this.file, this.encode());
      this.dirty = false;
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }
}
