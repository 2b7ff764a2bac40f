import createDebug from '../../debug.js';
import type { Clock, ClockTimer } from '../../clock.js';
import type { ConsumerOrderInfoManager } from './consumer-order-info.js';

const log = createDebug('rocketwire:broker:pop');

/**
 * Apache's ConsumerOrderInfoLockManager (enableNotifyAfterPopOrderLockRelease, on by default):
 * when a queue held by an order pop frees because its invisible time (or the one a
 * CHANGE_INVISIBLETIME set) ends, the pops waiting on the queue are woken then, instead of at the
 * end of their poll time. One timer per topic@group and queue, replaced on every change; a queue
 * still held when the broker starts gets one too (Apache's recover).
 */
export class OrderLockRelease {
  private readonly timers = new Map<string, ClockTimer>();

  constructor(
    private readonly clock: Clock,
    private readonly orderInfo: ConsumerOrderInfoManager,
    private readonly wake: (topic: string, queueId: number) => void,
  ) {}

  /** Follow every change of the order state from now on, and the queues the loaded state holds. */
  start(): void {
    this.orderInfo.onChange = (topic, group, queueId) => this.changed(topic, group, queueId);
    for (const [topic, group, queueId] of this.orderInfo.queues()) this.changed(topic, group, queueId);
  }

  private changed(topic: string, group: string, queueId: number): void {
    const key = `${topic}@${group}@${queueId}`;
    const old = this.timers.get(key);
    if (old) this.clock.clearTimeout(old);
    this.timers.delete(key);
    this.armIfHeld(key, topic, group, queueId);
  }

  /**
   * A timer for when the queue frees, read from the order state whenever it fires: a change made
   * meanwhile, or a timer of Node's firing a millisecond before Date.now() reaches its time, only
   * moves it. A queue free now wakes nothing here: the ack and change paths wake the waiting pops
   * themselves, in the request that freed it.
   */
  private armIfHeld(key: string, topic: string, group: string, queueId: number): void {
    const now = this.clock.now();
    const at = this.orderInfo.lockFreeTime(topic, group, queueId, now);
    if (at === null || at <= now) return;
    this.timers.set(
      key,
      this.clock.setTimeout(() => {
        this.timers.delete(key);
        const free = this.orderInfo.lockFreeTime(topic, group, queueId, this.clock.now());
        if (free !== null && free > this.clock.now()) return this.armIfHeld(key, topic, group, queueId);
        log('order queue %s@%s/%d free: waking its pops', topic, group, queueId);
        this.wake(topic, queueId);
      }, at - now),
    );
  }

  close(): void {
    this.orderInfo.onChange = null;
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
  }
}
