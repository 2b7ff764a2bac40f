import { queueKey, type MessageQueue } from '../../../protocol/internal.js';
import type { ProcessQueue } from '../core/process-queue.js';
import type { PullRequest } from '../core/pull-request.js';
import type { OffsetStore } from '../core/offset-store.js';
import { ConsumerOptionError } from '../errors.js';

/** A queue as the lite pull consumer's messages name it. */
export function queueKeyOf(mq: MessageQueue): string {
  return `${mq.topic}/${mq.brokerName}/${mq.queueId}`;
}

/**
 * One queue the lite pull consumer works on (Java's AssignedMessageQueue.MessageQueueState). Offsets
 * are −1 while unknown. `generation` grows at every seek: a pull that was in flight when it happened
 * comes back with an older generation and its messages are thrown away.
 */
export interface AssignedQueue {
  readonly mq: MessageQueue;
  readonly pq: ProcessQueue;
  readonly pr: PullRequest;
  paused: boolean;
  /** Where the next pull starts (the last pull's nextBeginOffset). */
  pullOffset: number;
  /** What commit() stores: the offset after what poll() has handed out (−1: nothing yet). */
  consumeOffset: number;
  /** Set by seek(), taken by the next pull. */
  seekOffset: number;
  generation: number;
  /** Aborts the pull in flight (seek: Java interrupts the pull task's thread). */
  pullAbort: AbortController | null;
}

/**
 * The queues a lite pull consumer holds (Java's AssignedMessageQueue): in subscribe mode the ones the
 * rebalance gave it, in assign mode the ones the user named. A queue taken away is dropped (its
 * ProcessQueue) and forgotten; what was cached for it is then skipped by poll().
 */
export class LitePullAssignment {
  private readonly table = new Map<string, AssignedQueue>();
  private readonly byPr = new WeakMap<PullRequest, AssignedQueue>();

  get(mq: MessageQueue): AssignedQueue | undefined {
    const st = this.table.get(queueKey(mq));
    return st !== undefined && !st.pq.dropped ? st : undefined;
  }

  ofPullRequest(pr: PullRequest): AssignedQueue | undefined {
    return this.byPr.get(pr);
  }

  add(pr: PullRequest, pullOffset: number): AssignedQueue {
    const st: AssignedQueue = {
      mq: pr.messageQueue,
      pq: pr.processQueue,
      pr,
      paused: false,
      pullOffset,
      consumeOffset: -1,
      seekOffset: -1,
      generation: 0,
      pullAbort: null,
    };
    const old = this.table.get(queueKey(pr.messageQueue));
    if (old !== undefined && old.pq !== pr.processQueue) old.pq.drop();
    this.table.set(queueKey(pr.messageQueue), st);
    this.byPr.set(pr, st);
    return st;
  }

  /** Drops and forgets the queues of `topic` (all topics when null) that `keep` does not name. */
  retain(keep: readonly MessageQueue[], topic: string | null): AssignedQueue[] {
    const wanted = new Set(keep.map(queueKey));
    const removed: AssignedQueue[] = [];
    for (const [key, st] of this.table) {
      if (topic !== null && st.mq.topic !== topic) continue;
      if (wanted.has(key) && !st.pq.dropped) continue;
      st.pq.drop();
      this.table.delete(key);
      removed.push(st);
    }
    return removed;
  }

  /** Forgets queues whose ProcessQueue was dropped elsewhere (the rebalance removed them). */
  prune(): void {
    for (const [key, st] of this.table) if (st.pq.dropped) this.table.delete(key);
  }

  /** The queues held now, dropped ones left out. */
  queues(): AssignedQueue[] {
    return [...this.table.values()].filter((st) => !st.pq.dropped);
  }

  dropAll(): void {
    for (const st of this.table.values()) st.pq.drop();
  }

  /**
   * commit(offsets): each held queue's offset into the offset store (in memory); returns the queues
   * committed. Throws ConsumerOptionError at the first offset that is not a non-negative integer.
   */
  commit(offsets: Iterable<readonly [MessageQueue, number]>, store: OffsetStore): MessageQueue[] {
    const mqs: MessageQueue[] = [];
    for (const [mq, offset] of offsets) {
      if (!Number.isInteger(offset) || offset < 0)
        throw new ConsumerOptionError(
          'offsets',
          `offset of ${queueKeyOf(mq)} must be a non-negative integer, got ${String(offset)}`,
        );
      const st = this.get(mq);
      if (st) {
        store.updateOffset(st.mq, offset, false);
        mqs.push(st.mq);
      }
    }
    return mqs;
  }
}
