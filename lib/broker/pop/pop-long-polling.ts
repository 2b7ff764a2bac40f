import type { RemotingCommand } from '../../../protocol/internal.js';
import type { Clock, ClockTimer } from '../../clock.js';
import type { RemotingConnection } from '../../remoting/index.js';

/** A pop waiting for messages: what it reads, and how it answers when one arrives or its time is over. */
export interface WaitingPop {
  topics: readonly string[];
  queueId: number;
  conn: RemotingConnection;
  /** The pop run again: an answer, or null to keep waiting. */
  retry: () => RemotingCommand | null;
  /** The answer when the poll time is over. */
  expire: () => RemotingCommand;
  resolve: (r: RemotingCommand | null) => void;
}

interface HeldPop extends WaitingPop {
  timer: ClockTimer;
}

/**
 * PopLongPollingService: pops that found nothing wait, per topic@group, until a message arrives
 * on one of their topics (run again) or their poll time is over (answered as they stand then).
 */
export class PopLongPolling {
  private readonly waiting = new Map<string, Set<HeldPop>>();

  constructor(private readonly clock: Clock) {}

  /** Pops waiting under `key` (topic@group). */
  count(key: string): number {
    return this.waiting.get(key)?.size ?? 0;
  }

  /** Number of pops waiting for messages (POLLING_INFO's pollingNum, summed). */
  get pollingNum(): number {
    let n = 0;
    for (const s of this.waiting.values()) n += s.size;
    return n;
  }

  /** Hold `pop` under `key` for at most `waitMs`. */
  wait(key: string, waitMs: number, pop: WaitingPop): void {
    const w: HeldPop = { ...pop, timer: this.clock.setTimeout(() => this.finish(key, w, true), waitMs) };
    let s = this.waiting.get(key);
    if (!s) this.waiting.set(key, (s = new Set()));
    s.add(w);
  }

  /** Every waiting pop answered with nothing (the broker closes). */
  close(): void {
    for (const set of this.waiting.values()) {
      for (const w of set) {
        this.clock.clearTimeout(w.timer);
        w.resolve(null);
      }
    }
    this.waiting.clear();
  }

  private finish(key: string, w: HeldPop, expired: boolean): void {
    if (!expired) {
      if (w.conn.closed) {
        this.drop(key, w);
        w.resolve(null);
        return;
      }
      const r = w.retry();
      if (r === null) return;
      this.drop(key, w);
      w.resolve(r);
      return;
    }
    this.drop(key, w);
    w.resolve(w.conn.closed ? null : w.expire());
  }

  private drop(key: string, w: HeldPop): void {
    this.clock.clearTimeout(w.timer);
    const s = this.waiting.get(key);
    if (!s) return;
    s.delete(w);
    if (s.size === 0) this.waiting.delete(key);
  }

  /** A message arrived on `topic`'s queue: every pop waiting for it runs again. */
  notifyArrival(topic: string, queueId: number): void {
    for (const [key, set] of [...this.waiting]) {
      for (const w of [...set]) {
        if (!w.topics.includes(topic)) continue;
        if (w.queueId >= 0 && topic === w.topics[0] && w.queueId !== queueId) continue;
        this.finish(key, w, false);
      }
    }
  }
}
