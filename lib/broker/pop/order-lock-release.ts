import type { Clock, ClockTimer } from '../../clock.js';
import type { ConsumerOrderInfoManager } from './consumer-order-info.js';

/**
 * Apache's ConsumerOrderInfoLockManager (enableNotifyAfterPopOrderLockRelease, on by default):
 * when a queue held by an order pop frees because its invisible time (or the one a
 * CHANGE_INVISIBLETIME set) ends, the pops waiting on the queue are woken then, instead of at the
 * end of their poll time. One timer per topic@group and queue, replaced on every change.
 */
export class OrderLockRelease {
  private readonly timers = new Map<string, ClockTimer>();

  constructor(
    private readonly clock: Clock,
    private readonly orderInfo: ConsumerOrderInfoManager,
    private readonly wake: (topic: string, queueId: number) => void,
  ) {}

  /** Follow every change of the order state from now on. */
  start(): void {
    this.orderInfo.onChange = (topic, group, queueId) => this.changed(topic, group, queueId);
  }

  private changed(topic: string, group: string, queueId: number): void {
    const now = this.clock.now();
    const at = this.orderInfo.lockFreeTime(topic, group, queueId, now);
    const key = `${topic}@${group}@${queueId}`;
    const old = this.timers.get(key);
    if (old) this.clock.clearTimeout(old);
    this.timers.delete(key);
    // free now: the ack path wakes the waiting pops itself
    if (at === null || at <= now) return;
    this.arm(key, topic, queueId, at);
  }

  private arm(key: string, topic: string, queueId: number, at: number): void {
    this.timers.set(
      key,
      this.clock.setTimeout(() => {
        // Node's timers may fire a millisecond before Date.now() reaches their time: a pop woken
        // then still finds the queue held and goes back to waiting for its whole poll time
        const now = this.clock.now();
        if (now < at) return this.arm(key, topic, queueId, at);
        this.timers.delete(key);
        this.wake(topic, queueId);
      }, at - this.clock.now()),
    );
  }

  close(): void {
    this.orderInfo.onChange = null;
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
  }
}
