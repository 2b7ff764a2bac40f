import type { RemotingCommand } from '../../protocol/index.js';
import type { RemotingConnection } from '../remoting/index.js';
import type { Clock, ClockTimer } from '../clock.js';

/** A parked pull: answered by `rerun` when a matching message arrives or the hold time is over. */
interface HeldPull {
  key: string;
  conn: RemotingConnection;
  queueOffset: number;
  match: ((tagsCode: number) => boolean) | null;
  timer: ClockTimer;
  resolve: (response: RemotingCommand | null) => void;
  rerun: () => RemotingCommand | null;
}

/**
 * Long polling (PullRequestHoldService). A pull that would answer PULL_NOT_FOUND and carries
 * FLAG_SUSPEND is parked under "<topic>@<queueId>"; the processor's promise stays pending, so the
 * eventual answer goes out with the request's own opaque. It is re-run (never parked again, no
 * second offset commit) as soon as a message with a matching tag lands beyond its offset, or when
 * its suspend time is over.
 */
export class PullRequestHoldService {
  private readonly held = new Map<string, Set<HeldPull>>();

  constructor(private readonly clock: Clock) {}

  get size(): number {
    let n = 0;
    for (const s of this.held.values()) n += s.size;
    return n;
  }

  hold(
    topic: string,
    queueId: number,
    conn: RemotingConnection,
    queueOffset: number,
    suspendMs: number,
    match: ((tagsCode: number) => boolean) | null,
    rerun: () => RemotingCommand | null,
  ): Promise<RemotingCommand | null> {
    return new Promise((resolve) => {
      const key = `${topic}@${queueId}`;
      const h: HeldPull = {
        key,
        conn,
        queueOffset,
        match,
        resolve,
        rerun,
        timer: this.clock.setTimeout(() => this.wake(h), suspendMs),
      };
      let set = this.held.get(key);
      if (!set) {
        set = new Set();
        this.held.set(key, set);
      }
      set.add(h);
    });
  }

  private remove(h: HeldPull): void {
    this.clock.clearTimeout(h.timer);
    const set = this.held.get(h.key);
    if (set) {
      set.delete(h);
      if (set.size === 0) this.held.delete(h.key);
    }
  }

  private wake(h: HeldPull): void {
    this.remove(h);
    if (h.conn.closed) {
      h.resolve(null);
      return;
    }
    let response: RemotingCommand | null;
    try {
      response = h.rerun();
    } catch {
      response = null;
    }
    h.resolve(response);
  }

  /** notifyMessageArriving: wake the pulls of this queue that are behind `maxOffset` and match a tag. */
  notifyMessageArriving(topic: string, queueId: number, maxOffset: number, tagsCodes: number[]): void {
    const set = this.held.get(`${topic}@${queueId}`);
    if (!set) return;
    for (const h of [...set]) {
      if (maxOffset <= h.queueOffset) continue;
      if (h.match && !tagsCodes.some((c) => h.match!(c))) continue;
      this.wake(h);
    }
  }

  /** A connection closed: its parked pulls are dropped without an answer. */
  dropConnection(conn: RemotingConnection): void {
    for (const set of [...this.held.values()]) {
      for (const h of [...set]) {
        if (h.conn === conn) {
          this.remove(h);
          h.resolve(null);
        }
      }
    }
  }

  /** Shutdown: answer nothing more. */
  clear(): void {
    for (const set of [...this.held.values()])
      for (const h of [...set]) {
        this.remove(h);
        h.resolve(null);
      }
  }
}
