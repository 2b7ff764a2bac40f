import createDebug from '../debug.js';
import type { Clock, ClockTimer } from '../clock.js';
import type { TopicRouteData } from '../../protocol/internal.js';

const log = createDebug('rocketwire:client');

/** What the fast refresh needs of its client instance. */
export interface FastRouteRefreshHost {
  readonly clock: Clock;
  /** Least time between two fast refreshes of one topic, in milliseconds. */
  readonly minIntervalMs: number;
  /** Most fast refreshes of all topics together in any second (a token bucket of that size). */
  readonly maxPerSecond: number;
  /** The topics whose cached route lists `addr` as one of its brokers' addresses. */
  topicsOfBroker(addr: string): string[];
  /** Fetches the topic's route from the name servers (the route table's own, one fetch per topic at a time). */
  refresh(topic: string): Promise<TopicRouteData>;
  /** Longest wait between the follow-ups of a route whose broker has no master (the periodic poll's period). */
  readonly maxFollowUpMs: number;
}

/**
 * Refreshes a topic's route as soon as a broker its route names stops taking connections (refused,
 * reset, closed under a call), instead of waiting for the periodic poll (30 s by default, as
 * Java's pollNameServerInterval). A master killed in a controller-mode group is replaced by its
 * promoted slave within a second or two, but the clients would keep calling the dead address until
 * their next poll: the failure itself is the earliest sign the route is stale. Java's client has
 * no such path.
 *
 * Bounded twice, on the injected clock, so that a broker that stays down or a name server that is
 * down itself is not hammered: a topic is refreshed at most once per `minIntervalMs` (failures
 * within the interval are ignored; the next failure after it asks again, which is how a promotion
 * that lands after the first refresh is picked up), and all topics together at most
 * `maxPerSecond` times a second (a token bucket; a topic refused a token is asked for again on
 * its next failure, and those refreshed recently are skipped then, so every topic gets its turn).
 *
 * A refresh that comes back with a broker that has queues but no master (the master's death is
 * registered, the promotion not yet) is followed up: asked again after `minIntervalMs`, then twice
 * as long each time up to `maxFollowUpMs`, until every broker of the route has a master. Without
 * it a client that only reads (a POP consumer finds no master to ask and so no connection to
 * fail) would wait for the periodic poll.
 */
export class FastRouteRefresh {
  private readonly lastByTopic = new Map<string, number>();
  /** Topics whose last refresh found a broker without a master: the next follow-up and its delay. */
  private readonly followUps = new Map<string, { timer: ClockTimer; delayMs: number }>();
  private stopped = false;
  private tokens: number;
  private refilledAt: number;
  /** Refreshes started, and those the bounds held back (stats and tests). */
  readonly counts = { started: 0, heldByTopicInterval: 0, heldByGlobalRate: 0 };

  constructor(private readonly host: FastRouteRefreshHost) {
    this.tokens = host.maxPerSecond;
    this.refilledAt = host.clock.now();
  }

  /** The broker at `addr` refused a connection or dropped one under a call: refresh the routes naming it. */
  brokerFailed(addr: string, error?: Error): void {
    const topics = this.host.topicsOfBroker(addr);
    if (topics.length === 0) return;
    log('broker %s failed (%s): fast route refresh of %d topic(s)', addr, error?.message ?? 'closed', topics.length);
    for (const topic of topics) this.request(topic);
  }

  /** Refreshes `topic` now unless a bound holds it back; true when a refresh started. */
  request(topic: string): boolean {
    const now = this.host.clock.now();
    const last = this.lastByTopic.get(topic);
    if (last !== undefined && now - last < this.host.minIntervalMs) {
      this.counts.heldByTopicInterval++;
      return false;
    }
    this.refill(now);
    if (this.tokens < 1) {
      this.counts.heldByGlobalRate++;
      return false;
    }
    this.tokens--;
    this.lastByTopic.set(topic, now);
    this.counts.started++;
    this.host.refresh(topic).then(
      (route) => this.followUp(topic, route),
      (err: unknown) => {
        log('fast route refresh of %s failed: %s', topic, (err as Error).message);
      },
    );
    return true;
  }

  /** Clears the follow-up timers (the instance's shutdown). */
  stop(): void {
    this.stopped = true;
    for (const f of this.followUps.values()) this.host.clock.clearTimeout(f.timer);
    this.followUps.clear();
  }

  private followUp(topic: string, route: TopicRouteData): void {
    const previous = this.followUps.get(topic);
    if (previous) this.host.clock.clearTimeout(previous.timer);
    const readable = new Set(route.queueDatas.map((q) => q.brokerName));
    const masterless = route.brokerDatas.some((b) => readable.has(b.brokerName) && !b.brokerAddrs['0']);
    if (!masterless || this.stopped) {
      this.followUps.delete(topic);
      return;
    }
    const delayMs = previous ? Math.min(previous.delayMs * 2, this.host.maxFollowUpMs) : this.host.minIntervalMs;
    log('route of %s has a broker without a master: asking again in %d ms', topic, delayMs);
    const timer = this.host.clock.setTimeout(() => {
      if (!this.stopped) this.request(topic);
    }, delayMs);
    this.followUps.set(topic, { timer, delayMs });
  }

  private refill(now: number): void {
    const elapsed = now - this.refilledAt;
    if (elapsed <= 0) return;
    const max = this.host.maxPerSecond;
    this.tokens = Math.min(max, this.tokens + (elapsed * max) / 1000);
    this.refilledAt = now;
  }
}
