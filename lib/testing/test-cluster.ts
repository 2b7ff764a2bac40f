import { AdminClient } from '../admin/index.js';
import type { AdminClientOptions } from '../admin/admin-types.js';
import { startBroker, type EmbeddedBroker, type StartBrokerOptions } from '../broker/index.js';
import { ManualClock, nextTurn, systemClock } from '../clock.js';
import {
  LitePullConsumer,
  PushConsumer,
  type LitePullConsumerOptions,
  type PushConsumerOptions,
} from '../consumer/index.js';
import { SimpleConsumer } from '../consumer/pop/simple-consumer.js';
import type { SimpleConsumerOptions } from '../consumer/pop/simple-consumer-options.js';
import {
  Producer,
  TransactionProducer,
  type ProducerOptions,
  type TransactionProducerOptions,
} from '../producer/index.js';
import { TestClusterOptionError, WaitTimeoutError } from './errors.js';

/**
 * A length of time: milliseconds, or a number with a unit: `'500ms'`, `'30s'`, `'15m'`, `'2h'`, `'3d'`.
 * @category Testing your application
 */
export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`;

/** Rounds of turns given after a timer while frames still move: a bound for a peer that never stops. */
const MAX_SETTLE_ROUNDS = 100;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a Duration; a TestClusterOptionError for anything else. */
export function durationMs(option: string, d: Duration): number {
  if (typeof d === 'number') {
    if (Number.isFinite(d) && d >= 0) return d;
  } else {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(String(d));
    if (m) return Number(m[1]) * (UNIT_MS[m[2]] as number);
  }
  throw new TestClusterOptionError(
    option,
    `${option} must be milliseconds ≥ 0 or a number with ms/s/m/h/d, got ${String(d)}`,
  );
}

/**
 * Options of startTestCluster: those of the embedded broker (startBroker), without `clock`, which
 * the cluster owns.
 * @category Testing your application
 */
export interface TestClusterOptions extends Omit<StartBrokerOptions, 'clock'> {
  /**
   * Where the cluster's clock starts, in epoch milliseconds.
   * @default the real time at start
   */
  startTime?: number;
  /**
   * Event-loop turns given to the sockets after each timer that `advance` fires, so that what the
   * timer sent is read and answered before the next one fires; given again while the name server
   * and brokers still read or write frames. Below 3, a call a timer makes may not reach the broker
   * within the first turns, and the clock moves on without its answer.
   * @default 3
   */
  turnsPerTimer?: number;
}

/**
 * The options a client factory of the cluster takes: the client's own, without the name server
 * address and the clock, which the cluster fills in.
 * @category Testing your application
 */
export type ClusterClientOptions<T> = Omit<T, 'namesrvAddr' | 'clock'>;

/**
 * An embedded name server and broker plus every client a test makes from it, all on one
 * ManualClock: `advance('3d')` runs three days of broker and client time (timers, transaction
 * checks, POP invisibility, consume timeouts, heartbeats) in as long as their work takes.
 * @category Testing your application
 */
export interface TestCluster {
  /** The clock the broker and every client made here run on. */
  readonly clock: ManualClock;
  /** The embedded broker (its `namesrv` address, stores and groups). */
  readonly broker: EmbeddedBroker;
  /** The name server's "host:port", for a client made by hand (give it `clock` too). */
  readonly namesrvAddr: string;
  /** A Producer on this cluster (not started). */
  producer(options: ClusterClientOptions<ProducerOptions>): Producer;
  /** A TransactionProducer on this cluster (not started). */
  transactionProducer(options: ClusterClientOptions<TransactionProducerOptions>): TransactionProducer;
  /** A PushConsumer on this cluster (not started). */
  pushConsumer<Orderly extends boolean = false>(
    options: ClusterClientOptions<PushConsumerOptions> & { orderly?: Orderly },
  ): PushConsumer<Orderly>;
  /** A LitePullConsumer on this cluster (not started). */
  litePullConsumer(options: ClusterClientOptions<LitePullConsumerOptions>): LitePullConsumer;
  /** A SimpleConsumer (POP) on this cluster (not started). */
  simpleConsumer(options: ClusterClientOptions<SimpleConsumerOptions>): SimpleConsumer;
  /** An AdminClient on this cluster. */
  admin(options?: ClusterClientOptions<AdminClientOptions>): AdminClient;
  /**
   * Moves the clock forward, firing every timer that falls due in time order and giving the
   * sockets a few event-loop turns after each, so what a timer sends is answered before the next
   * one fires. Resolves when the clock has reached the end.
   */
  advance(by: Duration): Promise<void>;
  /**
   * Waits, in real time, until `condition` holds (checked at once, then every 5 ms), for what
   * the clock does not drive: a message crossing the sockets, a handler finishing.
   * Rejects with WaitTimeoutError after `timeoutMs` (default 5 000).
   */
  waitFor(condition: () => boolean | Promise<boolean>, options?: { timeoutMs?: number; what?: string }): Promise<void>;
  /** Shuts down every client made here (last made first), then the broker. */
  close(): Promise<void>;
  /** close(), for `await using cluster = await startTestCluster()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

interface Closable {
  shutdown?(): Promise<void>;
  close?(): Promise<void>;
}

/**
 * Starts an embedded name server and broker on a new ManualClock, and returns the TestCluster
 * that makes clients on it.
 * @category Testing your application
 */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const { startTime, turnsPerTimer = 3, ...brokerOptions } = options;
  if (!Number.isInteger(turnsPerTimer) || turnsPerTimer < 1 || turnsPerTimer > 1000)
    throw new TestClusterOptionError(
      'turnsPerTimer',
      `turnsPerTimer must be an integer in 1..1000, got ${turnsPerTimer}`,
    );
  const clock = new ManualClock(startTime ?? systemClock.now());
  const broker = await startBroker({ ...brokerOptions, clock });
  const namesrvAddr = broker.namesrv;
  const made: Closable[] = [];
  let closed = false;
  function keep<T extends Closable>(client: T): T {
    made.push(client);
    return client;
  }
  const turns = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await new Promise<void>((resolve) => nextTurn(resolve));
  };
  // Frames the name server and brokers have read and written: they move while requests and their
  // answers cross the sockets. A timer may set off a chain of calls (a route look-up, then the call
  // it was for) longer than turnsPerTimer turns; without this the clock would jump to the chain's
  // own timeout. The broker arms its timers only when it has work, so no idle timer gives those
  // turns by the way.
  const traffic = (): number => {
    let frames = 0;
    for (const server of [broker.nameServer.server, ...broker.instances.map((b) => b.server)])
      for (const conn of server.connections) {
        const s = conn.stats();
        frames += s.framesIn + s.framesOut;
      }
    return frames;
  };
  /** turnsPerTimer turns, again while the sockets carried frames (at most MAX_SETTLE_ROUNDS times). */
  const settle = async (): Promise<void> => {
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) {
      const before = traffic();
      await turns(turnsPerTimer);
      if (traffic() === before) return;
    }
  };

  const cluster: TestCluster = {
    clock,
    broker,
    namesrvAddr,
    producer: (o) => keep(new Producer({ ...o, namesrvAddr, clock })),
    transactionProducer: (o) => keep(new TransactionProducer({ ...o, namesrvAddr, clock })),
    pushConsumer: (o) => keep(new PushConsumer({ ...o, namesrvAddr, clock })),
    litePullConsumer: (o) => keep(new LitePullConsumer({ ...o, namesrvAddr, clock })),
    simpleConsumer: (o) => keep(new SimpleConsumer({ ...o, namesrvAddr, clock })),
    admin: (o = {}) => keep(new AdminClient({ ...o, namesrvAddr, clock })),
    async advance(by) {
      const end = clock.now() + durationMs('advance', by);
      for (;;) {
        const at = clock.nextTimerAt();
        if (at === undefined || at > end) break;
        clock.advance(Math.max(0, at - clock.now()));
        await settle();
      }
      clock.advance(end - clock.now());
      await settle();
    },
    async waitFor(condition, o = {}) {
      const timeoutMs = o.timeoutMs ?? 5000;
      const deadline = systemClock.now() + timeoutMs;
      for (;;) {
        if (await condition()) return;
        if (systemClock.now() >= deadline) throw new WaitTimeoutError(o.what ?? 'the condition', timeoutMs);
        // a ref'd real-time wait: the test is waiting on it, so it must keep the process alive
        await new Promise<void>((resolve) => {
          const t = systemClock.setTimeout(resolve, 5) as unknown as { ref?: () => void };
          t.ref?.();
        });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      const errors: unknown[] = [];
      for (const c of made.reverse()) {
        // a client's shutdown may wait on its clock (in-flight budgets): keep time moving meanwhile
        const stop = c.shutdown ?? c.close;
        if (!stop) continue;
        let settled = false;
        void stop
          .call(c)
          .catch((err: unknown) => errors.push(err))
          .then(() => {
            settled = true;
          });
        while (!settled) {
          await turns(turnsPerTimer);
          // to the next timer the shutdown may wait on, not by a fixed step that can overshoot it
          const at = clock.nextTimerAt();
          if (!settled && at !== undefined) clock.advance(Math.max(0, at - clock.now()));
        }
      }
      await broker.close();
      if (errors.length > 0) throw errors[0];
    },
    [Symbol.asyncDispose]() {
      return cluster.close();
    },
  };
  return cluster;
}
