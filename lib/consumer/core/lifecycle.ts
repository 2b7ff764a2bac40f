import type { Debugger } from '../../debug.js';
import { ScheduledTask, type ConsumerInner, type MQClientInstance } from '../../client/index.js';
import { ConsumerStateError } from '../errors.js';
import { acquireConsumerInstance, checkNameServerAtStart } from './consumer-instance.js';
import type { ConsumerConfig } from './consumer-config.js';
import { REBALANCE_MIN_INTERVAL_MS } from './rebalance-impl.js';

/**
 * Lifecycle of a consumer, as Java's ServiceState (STARTING and SHUTTING_DOWN while start() / shutdown() run).
 * @category Consuming
 */
export type ConsumerState = 'CREATED' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN';

/** Java's consumeTimestamp default: 30 minutes before start. */
export const DEFAULT_CONSUME_TIMESTAMP_LAG_MS = 30 * 60_000;

type LifecycleConfig = Pick<
  ConsumerConfig,
  | 'clock'
  | 'logger'
  | 'consumerGroup'
  | 'messageModel'
  | 'instanceName'
  | 'client'
  | 'namesrvAddr'
  | 'persistOffsetIntervalMs'
  | 'startWithoutNameServer'
  | 'rebalanceIntervalMs'
>;

/**
 * The start/shutdown skeleton the push and lite pull consumers share (DefaultMQPushConsumerImpl's and
 * DefaultLitePullConsumerImpl's start and shutdown): the state, the client instance acquired with its
 * name-server check, the routes refreshed, the periodic tasks, a start that fails shutting down what it
 * made, and one shutdown however often it is asked for. What each consumer makes in between is its own.
 */
export class ConsumerLifecycle {
  private stateValue: ConsumerState = 'CREATED';
  private shutdownPromise: Promise<void> | null = null;
  private readonly tasks: ScheduledTask[] = [];

  constructor(
    private readonly config: LifecycleConfig,
    private readonly log: Debugger,
  ) {}

  get state(): ConsumerState {
    return this.stateValue;
  }

  /** Throws unless start() may run now (CREATED). */
  checkCreated(): void {
    if (this.stateValue !== 'CREATED')
      throw new ConsumerStateError(this.stateValue, `cannot start a consumer in state ${this.stateValue}`);
  }

  /** Throws `message` as a ConsumerStateError of the current state. */
  refuse(message: string): never {
    throw new ConsumerStateError(this.stateValue, message);
  }

  /**
   * Runs `body` as STARTING. A body that fails after the client instance was acquired shuts the
   * consumer down (releasing what it made) and rethrows; one refused by the name-server check is back
   * in CREATED already (acquire()).
   */
  async start(body: () => Promise<void>, shutdown: () => Promise<void>): Promise<void> {
    this.stateValue = 'STARTING';
    try {
      await body();
    } catch (err) {
      if (this.stateValue === 'STARTING' || this.stateValue === 'RUNNING') await shutdown().catch(() => undefined);
      throw err;
    }
  }

  /**
   * The client instance with the consumer registered, once a name server answered for `firstTopic`.
   * When none answers nothing else was acquired yet: the instance is given back, `reset` undoes what
   * start() did before, and the consumer is CREATED again, so start() may be called again later.
   */
  async acquire(consumer: ConsumerInner, firstTopic: string, reset: () => void = () => {}): Promise<MQClientInstance> {
    const { config } = this;
    const instance = await acquireConsumerInstance(config, consumer);
    try {
      await checkNameServerAtStart(instance, config, firstTopic);
    } catch (err) {
      await instance.unregisterConsumer(config.consumerGroup).catch(() => undefined);
      await instance.release(config.logger);
      reset();
      this.stateValue = 'CREATED';
      throw err;
    }
    return instance;
  }

  /**
   * Asks for each topic's route at once. A name server that answers (TOPIC_NOT_EXIST, say) is no
   * failure: the route is polled again every pollNameServerIntervalMs, as Java does; `warn` says which.
   */
  async refreshRoutes(
    instance: MQClientInstance,
    topics: Iterable<string>,
    warn: (topic: string, reason: string) => void,
  ): Promise<void> {
    await Promise.all(
      [...topics].map((t) =>
        instance.getTopicRoute(t, { refresh: true }).catch((err: unknown) => {
          warn(t, (err as Error).message.split('\n')[0]!);
        }),
      ),
    );
  }

  /** STARTING → RUNNING. */
  running(): void {
    this.stateValue = 'RUNNING';
  }

  /**
   * The periodic rebalance with 5.x RebalanceService's rule: the next round after 1 s when this one did
   * not balance, else after rebalanceIntervalMs. `round` resolves whether a round balanced.
   */
  scheduleRebalance(firstBalanced: boolean, round: () => Promise<boolean>): void {
    const { config } = this;
    const task = new ScheduledTask(
      'rebalance',
      config.rebalanceIntervalMs,
      async () => ((await round()) ? config.rebalanceIntervalMs : REBALANCE_MIN_INTERVAL_MS),
      this.log,
      config.clock,
    );
    task.start(firstBalanced ? config.rebalanceIntervalMs : REBALANCE_MIN_INTERVAL_MS);
    this.tasks.push(task);
  }

  /** Another periodic task, first run after `firstDelayMs`; stopped first at shutdown. */
  schedule(name: string, intervalMs: number, firstDelayMs: number, run: () => Promise<void>): void {
    const task = new ScheduledTask(name, intervalMs, run, this.log, this.config.clock);
    task.start(firstDelayMs);
    this.tasks.push(task);
  }

  /**
   * One shutdown however often it is asked for: a consumer never started is SHUTDOWN at once; else
   * SHUTTING_DOWN, the periodic tasks stopped, then `body`, then SHUTDOWN.
   */
  shutdown(body: () => Promise<void>): Promise<void> {
    this.shutdownPromise ??= this.doShutdown(body);
    return this.shutdownPromise;
  }

  private async doShutdown(body: () => Promise<void>): Promise<void> {
    if (this.stateValue === 'CREATED') {
      this.stateValue = 'SHUTDOWN';
      return;
    }
    this.stateValue = 'SHUTTING_DOWN';
    await Promise.all(this.tasks.map((t) => t.stop()));
    await body();
    this.stateValue = 'SHUTDOWN';
  }

  /** Unregisters the group and gives the client instance back. */
  async release(instance: MQClientInstance): Promise<void> {
    await instance.unregisterConsumer(this.config.consumerGroup).catch(() => undefined);
    await instance.release(this.config.logger);
  }
}
