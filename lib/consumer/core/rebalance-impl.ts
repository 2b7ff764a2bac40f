import createDebug from '../../debug.js';
import { compareMessageQueue, isRetryTopic, queueKey } from '../../../protocol/internal.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { OffsetStore } from './offset-store.js';
import type { ConsumerConfig } from './consumer-config.js';
import { ProcessQueue } from './process-queue.js';
import { newPullRequest, type PullRequest } from './pull-request.js';
import type { SubscriptionData } from './subscription.js';
import { inParallel } from '../../in-parallel.js';

/**
 * 5.x RebalanceService's minInterval (rocketmq.client.rebalance.minInterval): the least time from
 * the end of a round to the start of the next, and the retry after an unbalanced round.
 */
export const REBALANCE_MIN_INTERVAL_MS = 1000;

/**
 * Newly assigned queues of one topic whose start offsets are asked at once. Java asks them one after
 * another; at 1024 queues that is 1024 round trips before the first pull (docs/protocol-facts.md#rebalance).
 */
export const START_OFFSET_CONCURRENCY = 32;

/**
 * The group's client ids asked during one round, by broker name: a broker's answer serves every topic
 * of the round that it holds, so a round asks each broker at most once, not once per topic.
 */
export type RoundConsumerLists = Map<string, Promise<string[] | null>>;

const log = createDebug('rocketwire:consumer');

/** What every rebalance needs from its consumer (Java's RebalanceImpl fields and its consumer's calls). */
export interface RebalanceBaseHost {
  readonly config: Pick<ConsumerConfig, 'clock' | 'messageModel' | 'consumerGroup' | 'allocateStrategy'>;
  readonly clientId: string;
  readonly offsetStore: OffsetStore;
  subscriptionTable(): Map<string, SubscriptionData>;
  /** Readable queues of the topic from its route; null when there is no route. */
  subscribeQueues(topic: string): Promise<MessageQueue[] | null>;
  /**
   * Client ids of the group from a broker of the topic; null when unknown. A broker already asked
   * this round (in `asked`) is asked again only if its answer failed.
   */
  consumerIdList(topic: string, asked: RoundConsumerLists): Promise<string[] | null>;
  /** docs/protocol-facts.md#start-offset; a negative result means "skip this queue this round". */
  computePullFromWhere(mq: MessageQueue): Promise<number>;
  dispatchPullRequests(prs: PullRequest[]): void;
  /**
   * Called when a round changed the queues of a topic. Without `roundChanged`, awaited before the
   * topic's new queues' first pulls.
   */
  messageQueueChanged(topic: string): Promise<void>;
  /**
   * Called once after a round that changed the queues of `topics`, before any new queue of the
   * round is pulled: the round's new pull requests wait for it (the push consumer's one heartbeat
   * carrying every new subVersion). Absent, each topic's new queues are pulled as soon as the
   * topic is done.
   */
  roundChanged?(topics: string[]): Promise<void>;
}

/** What one rebalance round changed: the topics whose queues changed, and the new queues' pull requests. */
interface RoundChanges {
  topics: string[];
  prs: PullRequest[];
  consumerLists: RoundConsumerLists;
}

/**
 * Java's RebalanceImpl: owns the table of held queues and their process queues, computes the
 * assignment per subscribed topic and applies the difference. With a `roundChanged` host (the push
 * consumer) the round's new queues are pulled only after it has seen every topic and told the host
 * once (docs/protocol-facts.md#rebalance); without one, each topic's as soon as it is done. The
 * push consumer's subclass (push/rebalance-push-impl.ts) adds the orderly locks and POP topics; the
 * lite pull consumer's (lite-pull/rebalance-lite-pull-impl.ts) only tells its assignment.
 */
export abstract class RebalanceImpl<H extends RebalanceBaseHost = RebalanceBaseHost> {
  readonly processQueueTable = new Map<string, { mq: MessageQueue; pq: ProcessQueue }>();
  private running: Promise<boolean> | null = null;
  private again = false;
  /**
   * Rounds run (rebalanceOnce) and rounds asked for (doRebalance calls): a storm of
   * NOTIFY_CONSUMER_IDS_CHANGED asks many times, runs one round at a time and at most one more.
   */
  readonly counts = { requested: 0, runs: 0 };
  protected stopped = false;
  /** When the last round ended; the first round runs at once (see spaceFromLastRound). */
  private lastRoundEnd = Number.NEGATIVE_INFINITY;
  /** Whether the coalesced next round waits for REBALANCE_MIN_INTERVAL_MS. */
  private spaceAgain = false;
  /** Ends a spacing wait early (shutdown). */
  private wakeSpacing: (() => void) | null = null;

  constructor(protected readonly host: H) {}

  /**
   * Runs a rebalance now, or when `spaced` not before REBALANCE_MIN_INTERVAL_MS after the last round
   * ended; calls during a run coalesce into one more run after it. Resolves whether the
   * last round balanced (5.x RebalanceImpl.doRebalance): every topic's assignment is what this
   * consumer now works on. A lock refused, a start offset missing or a removal that gave up leaves it
   * unbalanced, and the periodic task then tries again after 1 s instead of 20 s.
   */
  doRebalance(spaced = false): Promise<boolean> {
    if (this.stopped) return Promise.resolve(true);
    this.counts.requested++;
    if (this.running) {
      // a round still waiting to start covers this request; one that may not wait starts it now
      if (this.wakeSpacing) {
        if (!spaced) this.wakeSpacing();
        return this.running;
      }
      // the coalesced round waits only if every request for it may wait
      this.spaceAgain = this.again ? this.spaceAgain && spaced : spaced;
      this.again = true;
      return this.running;
    }
    let space = spaced;
    this.running = (async () => {
      let balanced = true;
      try {
        do {
          if (space) await this.spaceFromLastRound();
          if (this.stopped) break;
          this.again = false;
          this.counts.runs++;
          balanced = await this.rebalanceOnce();
          this.lastRoundEnd = this.host.config.clock.now();
          space = this.spaceAgain;
        } while (this.again && !this.stopped);
      } finally {
        this.running = null;
      }
      return balanced;
    })();
    return this.running;
  }

  /**
   * 5.x RebalanceService's minInterval for a round the broker asked for (NOTIFY_CONSUMER_IDS_CHANGED):
   * it starts at least REBALANCE_MIN_INTERVAL_MS after the previous round ended. Without it, a group
   * whose members join one after another runs a round per notification on every member: N² rounds,
   * each asking the broker for the consumer list. The periodic task is spaced by its own interval;
   * the rounds Java does not have (a new connection) and resume or subscribe run at once.
   */
  private spaceFromLastRound(): Promise<void> {
    const wait = this.lastRoundEnd + REBALANCE_MIN_INTERVAL_MS - this.host.config.clock.now();
    if (wait <= 0) return Promise.resolve();
    const clock = this.host.config.clock;
    return new Promise((resolve) => {
      const timer = clock.setTimeout(() => {
        this.wakeSpacing = null;
        resolve();
      }, wait);
      this.wakeSpacing = () => {
        clock.clearTimeout(timer);
        this.wakeSpacing = null;
        resolve();
      };
    });
  }

  private async rebalanceOnce(): Promise<boolean> {
    const subs = this.host.subscriptionTable();
    let balanced = true;
    const round: RoundChanges = { topics: [], prs: [], consumerLists: new Map() };
    for (const topic of subs.keys()) {
      if (this.stopped) return balanced;
      try {
        if (!(await this.rebalanceByTopic(topic, round))) balanced = false;
      } catch (err) {
        log('rebalance of %s failed: %s', topic, (err as Error).message);
        // As Java, a failure on the retry topic (often not created yet) does not count.
        if (!isRetryTopic(topic)) balanced = false;
      }
    }
    if (round.topics.length > 0 && this.host.roundChanged) {
      // One heartbeat for the whole round, before its first new pull: the broker answers a pull
      // whose subVersion is newer than the one it holds SUBSCRIPTION_NOT_LATEST, and one heartbeat
      // per changed topic cost topics × the heartbeat's size (which grows with the topics).
      await this.host
        .roundChanged(round.topics)
        .catch((err: unknown) => log('roundChanged failed: %s', (err as Error).message));
    }
    if (round.prs.length > 0 && !this.stopped) this.host.dispatchPullRequests(round.prs);
    this.afterRound();
    // Drop queues of topics no longer subscribed.
    for (const [key, { mq, pq }] of this.processQueueTable) {
      if (!subs.has(mq.topic)) {
        pq.drop();
        this.processQueueTable.delete(key);
        pq.markRemoved();
        log('dropped %o: topic no longer subscribed', mq);
      }
    }
    return balanced;
  }

  /**
   * False when the topic did not balance. No route or no consumer list counts as balanced, as in Java
   * (there is nothing to work on until the next period).
   */
  private async rebalanceByTopic(topic: string, round: RoundChanges): Promise<boolean> {
    const { config } = this.host;
    // A topic the broker hands out by POP is popped (PopConsumeService) and none of its queues is
    // pulled, so the consumer never mixes pull and pop in a group the broker switched.
    if (!isRetryTopic(topic) && (await this.handedOutByPop(topic))) {
      await this.updateProcessQueueTableInRebalance(topic, []);
      return true;
    }
    const mqSet = await this.host.subscribeQueues(topic);
    if (mqSet === null) {
      log('rebalance: no route for %s yet', topic);
      return true;
    }
    let assigned: MessageQueue[];
    if (config.messageModel === 'BROADCASTING') {
      assigned = mqSet;
    } else {
      const cidAll = await this.host.consumerIdList(topic, round.consumerLists);
      if (cidAll === null || cidAll.length === 0) {
        log('rebalance: no consumer id list for %s/%s', config.consumerGroup, topic);
        return true;
      }
      const mqAll = mqSet.slice().sort(compareMessageQueue);
      const cids = cidAll.slice().sort(compareJavaStrings);
      try {
        assigned = config.allocateStrategy.allocate(config.consumerGroup, this.host.clientId, mqAll, cids);
      } catch (err) {
        log('allocate strategy %s failed: %s', config.allocateStrategy.name, (err as Error).message);
        return false;
      }
    }
    const { changed, prs } = await this.updateProcessQueueTableInRebalance(topic, assigned);
    if (changed) {
      log('rebalance changed %s: now %d queues', topic, assigned.length);
      round.topics.push(topic);
      await this.host
        .messageQueueChanged(topic)
        .catch((err: unknown) => log('messageQueueChanged failed: %s', (err as Error).message));
    }
    if (this.host.roundChanged) round.prs.push(...prs);
    else if (prs.length > 0 && !this.stopped) this.host.dispatchPullRequests(prs);
    const working = new Set<string>();
    for (const [key, { mq, pq }] of this.processQueueTable) if (mq.topic === topic && !pq.dropped) working.add(key);
    return working.size === assigned.length && assigned.every((mq) => working.has(queueKey(mq)));
  }

  private async updateProcessQueueTableInRebalance(
    topic: string,
    mqSet: MessageQueue[],
  ): Promise<{ changed: boolean; prs: PullRequest[] }> {
    const { config } = this.host;
    const now = config.clock.now();
    const wanted = new Map(mqSet.map((mq) => [queueKey(mq), mq]));
    let changed = false;
    for (const [key, { mq, pq }] of this.processQueueTable) {
      if (mq.topic !== topic) continue;
      const expired = !wanted.has(key) ? false : pq.isPullExpired(now);
      if (!wanted.has(key) || expired) {
        pq.drop();
        if (await this.removeUnnecessaryMessageQueue(mq, pq)) {
          this.processQueueTable.delete(key);
          pq.markRemoved();
          changed = true;
          log('rebalance removed %o%s', mq, expired ? ' (pull expired)' : '');
        }
      }
    }
    // The new queues' start offsets are asked together; they are taken in the order of `wanted`.
    const fresh = [...wanted].filter(([key]) => !this.processQueueTable.has(key));
    const starts = await inParallel(fresh, START_OFFSET_CONCURRENCY, ([, mq]) => this.startOffset(mq));
    const prs: PullRequest[] = [];
    for (let i = 0; i < fresh.length; i++) {
      const [key, mq] = fresh[i]!;
      const nextOffset = starts[i]!;
      if (nextOffset < 0 || this.processQueueTable.has(key)) continue;
      const pq = new ProcessQueue(now);
      this.admitted(pq);
      this.processQueueTable.set(key, { mq, pq });
      const pr = newPullRequest(mq, pq, nextOffset);
      prs.push(pr);
      changed = true;
      log('rebalance added %o from offset %d', mq, nextOffset);
    }
    return { changed, prs };
  }

  /** Where a newly assigned queue's pulls start; negative when it is not taken this round. */
  private async startOffset(mq: MessageQueue): Promise<number> {
    if (!(await this.admit(mq))) return -1;
    this.host.offsetStore.removeOffset(mq);
    const nextOffset = await this.host.computePullFromWhere(mq);
    if (nextOffset < 0) log('rebalance: no start offset for %o, skipping it this round', mq);
    return nextOffset;
  }

  /**
   * Forgets a queue: persist its offset (oneway) and drop it from the offset table. False when the
   * queue could not be removed this round (it then stays dropped in the table until a later one).
   */
  async removeUnnecessaryMessageQueue(mq: MessageQueue, _pq: ProcessQueue): Promise<boolean> {
    const { offsetStore } = this.host;
    await offsetStore.persist(mq);
    offsetStore.removeOffset(mq);
    return true;
  }

  /** Whether the broker hands the topic out by POP (then none of its queues is pulled). */
  protected async handedOutByPop(_topic: string): Promise<boolean> {
    return false;
  }

  /** Whether a newly assigned queue may be taken this round (orderly: its lock was granted). */
  protected async admit(_mq: MessageQueue): Promise<boolean> {
    return true;
  }

  /** A newly assigned queue was taken, before its first pull. */
  protected admitted(_pq: ProcessQueue): void {}

  /** After every round, before the queues of topics no longer subscribed are dropped. */
  protected afterRound(): void {}

  /** Removes one queue at once (OFFSET_ILLEGAL handling, offset reset). */
  async removeProcessQueue(mq: MessageQueue): Promise<void> {
    const key = queueKey(mq);
    const entry = this.processQueueTable.get(key);
    if (!entry) return;
    this.processQueueTable.delete(key);
    entry.pq.drop();
    entry.pq.markRemoved();
    await this.removeUnnecessaryMessageQueue(mq, entry.pq);
  }

  /** Drops a held queue now (OFFSET_ILLEGAL, offset reset); its removal follows through removeProcessQueue. */
  dropProcessQueue(pq: ProcessQueue): void {
    pq.drop();
  }

  /** Shutdown: every held queue is dropped, so nothing pulled or consumed after it counts. */
  dropAll(): void {
    for (const { pq } of this.processQueueTable.values()) pq.drop();
  }

  heldQueues(): MessageQueue[] {
    return [...this.processQueueTable.values()].map((e) => e.mq);
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    this.wakeSpacing?.();
    await this.running;
  }
}

/** Java string order (UTF-16 code units), as the client ids of a group are sorted. */
function compareJavaStrings(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
