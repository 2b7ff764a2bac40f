import * as path from 'node:path';
import createDebug from '../../debug.js';
import { ProtocolError } from '../../../protocol/index.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from '../atomic-file.js';
import { Unsaved } from '../unsaved.js';

const log = createDebug('rocketwire:broker:pop');

/**
 * One non-order pop of one queue (Java's PopCheckPoint, S/pop/PopCheckPoint): the offsets it
 * handed out, invisible until popTime + invisibleTime, and which of them were acked. Apache keeps
 * these as timer messages in `rmq_sys_REVIVE_LOG_{cluster}` read back by PopReviveService; the
 * embedded broker keeps them in a table persisted to `<store>/config/popCheckpoints.json`, which
 * is all a restart needs to revive what was not acked.
 */
export interface PopCheckpoint {
  /** Group (`c`). */
  readonly group: string;
  /** The topic the messages were read from: the topic or its pop retry topic (`t`). */
  readonly topic: string;
  /** The topic the consumer popped, for the retry topic of a revive. */
  readonly originTopic: string;
  readonly queueId: number;
  /** ckQueueOffset of the receipt handles (`so`). */
  readonly startOffset: number;
  readonly popTime: number;
  readonly invisibleTime: number;
  readonly reviveQid: number;
  /** The popped queue offsets, ascending. */
  readonly offsets: readonly number[];
  /** Offsets acked (or moved to a new checkpoint by CHANGE_INVISIBLETIME). */
  readonly acked: Set<number>;
}

/** Java matches acks to checkpoints on t+c+q+so+pt (+ broker name, always this broker here). */
export function checkpointKey(
  group: string,
  topic: string,
  queueId: number,
  startOffset: number,
  popTime: number,
): string {
  return `${topic}@${group}@${queueId}@${startOffset}@${popTime}`;
}

interface CheckpointFile {
  checkpoints: Array<Omit<PopCheckpoint, 'acked'> & { acked: number[] }>;
}

function decodeFile(text: string): PopCheckpoint[] {
  const o = JSON.parse(text) as CheckpointFile;
  if (!o || !Array.isArray(o.checkpoints)) throw new ProtocolError('popCheckpoints.json: no "checkpoints" array', 0);
  return o.checkpoints.map((c, i) => {
    for (const k of ['queueId', 'startOffset', 'popTime', 'invisibleTime', 'reviveQid'] as const) {
      if (!Number.isSafeInteger(c[k]))
        throw new ProtocolError(`popCheckpoints.json: checkpoints[${i}].${k} is not an integer`, 0);
    }
    for (const k of ['group', 'topic', 'originTopic'] as const) {
      if (typeof c[k] !== 'string')
        throw new ProtocolError(`popCheckpoints.json: checkpoints[${i}].${k} is not a string`, 0);
    }
    if (!Array.isArray(c.offsets) || !Array.isArray(c.acked))
      throw new ProtocolError(`popCheckpoints.json: checkpoints[${i}] has no offsets/acked arrays`, 0);
    return { ...c, offsets: c.offsets.map(Number), acked: new Set(c.acked.map(Number)) };
  });
}

/** The table of open checkpoints, by checkpointKey. */
export class PopCheckpointTable {
  readonly file: string;
  private readonly table = new Map<string, PopCheckpoint>();
  /** Changes not yet written (the owner wakes its persist task on them). */
  readonly unsaved = new Unsaved();
  private loaded = false;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'popCheckpoints.json');
  }

  /** Read the file (or its .bak); ConfigFileError when neither reads, as the other config files. */
  load(): void {
    const list = loadConfigFile(this.file, decodeFile, this.warn);
    for (const c of list ?? []) this.table.set(checkpointKey(c.group, c.topic, c.queueId, c.startOffset, c.popTime), c);
    this.loaded = true;
  }

  get size(): number {
    return this.table.size;
  }

  add(ck: PopCheckpoint): void {
    this.table.set(checkpointKey(ck.group, ck.topic, ck.queueId, ck.startOffset, ck.popTime), ck);
    this.unsaved.mark();
  }

  get(key: string): PopCheckpoint | undefined {
    return this.table.get(key);
  }

  /** Mark `offset` of the checkpoint acked; drops the checkpoint once every offset is. False when there is no such checkpoint or offset. */
  ack(key: string, offset: number): boolean {
    const ck = this.table.get(key);
    if (!ck?.offsets.includes(offset)) return false;
    ck.acked.add(offset);
    if (ck.acked.size >= ck.offsets.length) this.table.delete(key);
    this.unsaved.mark();
    return true;
  }

  /** Checkpoints whose invisible time is over at `now` (Java revives at popTime + invisibleTime). */
  due(now: number): PopCheckpoint[] {
    const out: PopCheckpoint[] = [];
    for (const ck of this.table.values()) if (ck.popTime + ck.invisibleTime <= now) out.push(ck);
    return out;
  }

  /** Un-acked offsets still invisible on (group, topic, queueId): how many messages are in flight. */
  inFlight(group: string, topic: string, queueId: number): number {
    let n = 0;
    for (const ck of this.table.values())
      if (ck.group === group && ck.topic === topic && ck.queueId === queueId) n += ck.offsets.length - ck.acked.size;
    return n;
  }

  remove(ck: PopCheckpoint): void {
    this.table.delete(checkpointKey(ck.group, ck.topic, ck.queueId, ck.startOffset, ck.popTime));
    this.unsaved.mark();
  }

  persist(force = false): void {
    if (!this.loaded || (!this.unsaved.value && !force)) return;
    const checkpoints = [...this.table.values()].map((c) => ({ ...c, acked: [...c.acked] }));
    try {
      writeFileAtomic(this.file, JSON.stringify({ checkpoints }), true, true);
      this.unsaved.clear();
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }
}
