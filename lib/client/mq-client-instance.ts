import createDebug from '../debug.js';
import {
  createResponse,
  decodeMessages,
  messageQueueToJson,
  toJavaJson,
  type MessageQueue,
  Operations,
  queueKey,
  ResponseCode,
  type HeartbeatData,
  type MessageExt,
  type RemotingCommand,
  type TopicRouteData,
} from '../../protocol/internal.js';
import { BrokerError, RemotingClient } from '../remoting/index.js';
import {
  buildClientId,
  resolveClientOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from './client-options.js';
import type { ConsumerInner } from './consumer-inner.js';
import { BrokerRequestRefusedError, ClientOptionError, MQClientError, NameServerUnavailableError } from './errors.js';
import { buildHeartbeatData } from './heartbeat-data.js';
import { checkTopicRoute } from './topic-route.js';
import { MQClientAPI } from './mq-client-api.js';
import { encodedOperationRequest, encodeRequestBody, operationRequest, readReply } from './operation-call.js';
import { registerReplyMessageProcessor, type ReplyListener } from './reply-message.js';
import { ScheduledTask } from './scheduled-task.js';
import { serveCheckTransactionState, type TransactionCheckHandler } from './transaction-check.js';
import { TypedEmitter } from '../emitter.js';
import { LoggerSet, type Logger } from '../logger.js';

const log = createDebug('rocketwire:client');

/** What a client instance tells its clients (the producer and consumers). */
interface ClientInstanceEvents {
  nameServerStatus: [status: NameServerStatus];
  routeChange: [topic: string, route: TopicRouteData];
}

/**
 * A name server stopped answering (`error` set) or answers again after failing (`error` undefined):
 * the clients' `'nameServerError'` and `'nameServerReachable'` events.
 * @category Shared by every client
 */
export interface NameServerStatus {
  /** The name server's address ("host:port"). */
  addr: string;
  /** Why it did not answer; absent when it answered. */
  error?: Error;
}

/** Called with a topic's new route whenever a fetch returns something different from the cache. */
export type RouteListener = (topic: string, route: TopicRouteData) => void;

const instances = new Map<string, MQClientInstance>();

/** Options every client of one shared instance must agree on (its one RemotingClient uses them). */
const SHARED_CONNECTION_OPTIONS = [
  'serializeType',
  'connectTimeoutMs',
  'tls',
  'acl',
  'language',
  'version',
  'maxUnmatchedResponses',
] as const;

function sameOption(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // acl credentials and tls options given as equal literals by two clients are the same options
  if (a && b && typeof a === 'object' && typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

/**
 * The per-process, per-clientId client (MQClientInstance in Java): one RemotingClient, the name server
 * list, the route and broker-address caches, heartbeats, scheduled tasks, and the handlers of
 * broker-initiated requests. Producers and consumers share it through acquire()/release().
 */
export class MQClientInstance extends MQClientAPI {
  readonly clientId: string;
  readonly remoting: RemotingClient;
  readonly options: ResolvedClientOptions;

  private refCount = 0;
  private startPromise: Promise<void> | null = null;
  private shutdownPromise: Promise<void> | null = null;
  private namesrvIndex = 0;
  private readonly topicRouteTable = new Map<string, TopicRouteData>();
  private readonly routeFetches = new Map<string, Promise<TopicRouteData>>();
  /** brokerName → (broker id → address), merged from every route read. */
  private readonly brokerAddrTable = new Map<string, Record<string, string>>();
  /** Broker address → the `version` its last heartbeat answer carried. */
  private readonly brokerVersionTable = new Map<string, number>();
  private readonly producers = new Set<string>();
  /** Transaction producers' check-back handlers by group (CHECK_TRANSACTION_STATE, transaction-check.ts). */
  readonly transactionCheckers = new Map<string, TransactionCheckHandler>();
  private readonly consumers = new Map<string, ConsumerInner>();
  private readonly replyListeners = new Set<ReplyListener>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Heartbeat rounds (sendHeartbeat) under way: Java's lockHeartbeat, held. */
  private heartbeating = 0;
  /** Brokers whose new connection's heartbeat (onBrokerConnected) is in flight. */
  private readonly connectBeats = new Set<string>();
  private readonly tasks: ScheduledTask[];
  /**
   * The loggers of the clients sharing this instance: a name-server episode is logged once to each
   * distinct one (lib/logger.ts).
   */
  readonly logger = new LoggerSet();
  /** Name server and topic ("addr\0topic") whose last route was refused (RouteLimitError): logged once. */
  private readonly routesRefused = new Set<string>();
  /** Name servers whose last request failed: an episode is logged when it starts and when it ends. */
  private readonly namesrvFailing = new Set<string>();
  /** Name-server failures and recoveries, route changes (onNameServerStatus, onRouteChange). */
  private readonly events = new TypedEmitter<ClientInstanceEvents>();
  /** The last name-server answer: address and clock time (health()). */
  lastNameServerAnswer: { addr: string; atMs: number } | null = null;
  /** Broker address → clock time of its last answered heartbeat (health()). */
  readonly lastHeartbeatAnswer = new Map<string, number>();

  /**
   * The shared instance for the options' clientId, created on first use; a later acquire with the same
   * clientId gets that instance and its options (as in Java). Pair every acquire with release().
   */
  static acquire(options: ClientOptions): MQClientInstance {
    const resolved = resolveClientOptions(options);
    const clientId = buildClientId(resolved);
    let inst = instances.get(clientId);
    if (!inst) {
      inst = new MQClientInstance(resolved, clientId);
      instances.set(clientId, inst);
    } else if (resolved.clock !== inst.options.clock) {
      // The shared instance's clock drives heartbeats, flushes and call timeouts of every user of
      // it: a second clock would be silently ignored.
      throw new ClientOptionError(
        'clock',
        `differs from the clock of client instance ${clientId} (give this client another instanceName)`,
      );
    }
    // The connection side of the shared instance: a client asking for other values would silently
    // get the first client's.
    for (const option of SHARED_CONNECTION_OPTIONS) {
      if (!sameOption(resolved[option], inst.options[option])) {
        throw new ClientOptionError(
          option,
          `differs from the ${option} of client instance ${clientId}, which another client already uses (give this client another instanceName)`,
        );
      }
    }
    if (resolved.namespaceV2 !== inst.options.namespaceV2) {
      // stamped on every request of the shared instance, as Java's NamespaceRpcHook on its MQClientAPIImpl
      throw new ClientOptionError(
        'namespaceV2',
        `differs from the namespaceV2 of client instance ${clientId} (give this client another instanceName)`,
      );
    }
    inst.refCount++;
    inst.logger.add(resolved.logger);
    return inst;
  }

  private constructor(options: ResolvedClientOptions, clientId: string) {
    const remoting = new RemotingClient({
      serializeType: options.serializeType,
      connectTimeoutMs: options.connectTimeoutMs,
      tls: options.tls,
      acl: options.acl,
      language: options.language,
      version: options.version,
      clock: options.clock,
      maxUnmatchedResponses: options.maxUnmatchedResponses,
    });
    super({
      remoting,
      clientId,
      apiTimeoutMs: options.mqClientApiTimeoutMs,
      language: options.language,
      version: options.version,
      serializeType: options.serializeType,
      namespaceV2: options.namespaceV2,
    });
    this.remoting = remoting;
    this.clientId = clientId;
    this.options = options;
    this.tasks = [
      new ScheduledTask(
        'updateTopicRouteInfoFromNameServer',
        options.pollNameServerIntervalMs,
        () => this.refreshAllRoutes(),
        log,
        options.clock,
      ),
      new ScheduledTask(
        'sendHeartbeatToAllBrokers',
        options.heartbeatIntervalMs,
        () => this.sendHeartbeatToAllBrokers(),
        log,
        options.clock,
      ),
      new ScheduledTask(
        'persistAllConsumerOffset',
        options.persistOffsetIntervalMs,
        () => this.persistAllConsumerOffsets(),
        log,
        options.clock,
      ),
    ];
    this.registerBrokerRequestProcessors();
    // Java 5.x's channel event listener (enableHeartbeatChannelEventListener, on by default): a new
    // connection to a known broker gets a heartbeat at once, then the consumers rebalance
    remoting.onConnected((addr) => this.onBrokerConnected(addr));
    remoting.onPeerMisbehaved((err) => this.logger.warn(err.message));
  }

  /** Starts the scheduled tasks once; later calls resolve at once. */
  start(): Promise<void> {
    if (this.shutdownPromise) return Promise.reject(new MQClientError(`client instance ${this.clientId} is shut down`));
    this.startPromise ??= Promise.resolve().then(() => {
      const [routes, heartbeat, persist] = this.tasks;
      // First runs as in Java (docs/protocol-facts.md#scheduled-tasks), capped by the configured period so short
      // test periods apply.
      routes!.start(Math.min(10, this.options.pollNameServerIntervalMs));
      heartbeat!.start(Math.min(1000, this.options.heartbeatIntervalMs));
      persist!.start(Math.min(10_000, this.options.persistOffsetIntervalMs));
      log('client instance %s started', this.clientId);
    });
    return this.startPromise;
  }

  /** Drops one reference; the last one stops the tasks, waits for pending unregistrations and closes connections. */
  release(logger?: Logger): Promise<void> {
    if (logger) this.logger.remove(logger);
    if (this.refCount > 0) this.refCount--;
    if (this.refCount > 0) return Promise.resolve();
    return this.shutdown();
  }

  private shutdown(): Promise<void> {
    this.shutdownPromise ??= (async () => {
      if (instances.get(this.clientId) === this) instances.delete(this.clientId);
      await Promise.all(this.tasks.map((t) => t.stop()));
      await Promise.allSettled([...this.pending]);
      await this.remoting.close();
      log('client instance %s shut down', this.clientId);
    })();
    return this.shutdownPromise;
  }

  /** Keeps a background promise so shutdown can wait for it. */
  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const done = (): void => {
      this.pending.delete(p);
    };
    p.then(done, done);
    return p;
  }

  // ---------------------------------------------------------------- name server and routes

  /**
   * Sends a request to the name servers, starting with the last one that answered and moving on to the
   * next on a transport failure (refused, timeout, closed). A broker-style answer (any response) ends it.
   */
  async invokeNameServer(
    request: RemotingCommand,
    timeoutMs = this.options.mqClientApiTimeoutMs,
    quiet = false,
  ): Promise<RemotingCommand> {
    return (await this.invokeNameServerFrom(request, timeoutMs, quiet)).res;
  }

  /** invokeNameServer, with the address of the name server that answered. */
  private async invokeNameServerFrom(
    request: RemotingCommand,
    timeoutMs = this.options.mqClientApiTimeoutMs,
    quiet = false,
  ): Promise<{ res: RemotingCommand; addr: string }> {
    const addrs = this.options.namesrvAddrs;
    const failures: { addr: string; error: Error }[] = [];
    for (let i = 0; i < addrs.length; i++) {
      const idx = (this.namesrvIndex + i) % addrs.length;
      const addr = addrs[idx]!;
      try {
        const res = await this.remoting.invoke(addr, request, { timeoutMs });
        this.namesrvIndex = idx;
        this.nameServerAnswered(addr);
        return { res, addr };
      } catch (err) {
        log('name server %s failed: %s', addr, (err as Error).message);
        failures.push({ addr, error: err as Error });
        if (!quiet) this.nameServerFailed(addr, err as Error);
      }
    }
    this.namesrvIndex = (this.namesrvIndex + 1) % addrs.length;
    throw new NameServerUnavailableError(failures);
  }

  private nameServerAnswered(addr: string): void {
    this.lastNameServerAnswer = { addr, atMs: this.options.clock.now() };
    if (!this.namesrvFailing.delete(addr)) return;
    this.logger.info(`name server ${addr} answers again`);
    this.events.emit('nameServerStatus', { addr });
  }

  private nameServerFailed(addr: string, error: Error): void {
    if (this.shutdownPromise) return;
    if (!this.namesrvFailing.has(addr)) {
      this.namesrvFailing.add(addr);
      this.logger.warn(`name server ${addr} is not answering: ${error.message.split('\n')[0]}`);
    }
    this.events.emit('nameServerStatus', { addr, error });
  }

  /** Registers a listener for name-server failures and recoveries; returns the function that removes it. */
  onNameServerStatus(listener: (status: NameServerStatus) => void): () => void {
    return this.events.on('nameServerStatus', listener);
  }

  /**
   * The check a client's start() makes: one GET_ROUTEINFO_BY_TOPIC for `topic`, each name server
   * given `connectTimeoutMs`. Any answer, TOPIC_NOT_EXIST included, shows a name server is there;
   * NameServerUnavailableError (retriable, naming every address and its error) when none answered.
   */
  async checkNameServer(topic: string): Promise<void> {
    const op = Operations.GET_ROUTEINFO_BY_TOPIC;
    // quiet: the caller's start() rejects with the failures, which is their report
    await this.invokeNameServer(
      operationRequest(op, { topic }, undefined, this.ctx),
      this.options.connectTimeoutMs,
      true,
    );
  }

  /**
   * The topic's route, from the cache unless `refresh` or not cached. A topic the name server does not
   * know raises BrokerError with code TOPIC_NOT_EXIST (17).
   */
  getTopicRoute(topic: string, opts?: { refresh?: boolean }): Promise<TopicRouteData> {
    if (!opts?.refresh) {
      const cached = this.topicRouteTable.get(topic);
      if (cached) return Promise.resolve(cached);
    }
    let p = this.routeFetches.get(topic);
    if (!p) {
      p = this.fetchTopicRoute(topic).finally(() => this.routeFetches.delete(topic));
      this.routeFetches.set(topic, p);
    }
    return p;
  }

  /** The route of `topic` as last fetched, without asking anybody. */
  cachedTopicRoute(topic: string): TopicRouteData | undefined {
    return this.topicRouteTable.get(topic);
  }

  /** GET_ROUTEINFO_BY_TOPIC without touching the caches (used for the TBW102 template route). */
  async queryTopicRoute(topic: string): Promise<TopicRouteData> {
    const op = Operations.GET_ROUTEINFO_BY_TOPIC;
    const { res, addr } = await this.invokeNameServerFrom(operationRequest(op, { topic }, undefined, this.ctx));
    // Errors say "name server" rather than the address, as they always have.
    const route = readReply(op, res, 'name server').body;
    if (route === null) {
      throw new BrokerError(ResponseCode.TOPIC_NOT_EXIST, `empty route for topic ${topic}`, { requestCode: op.code });
    }
    try {
      checkTopicRoute(topic, route, addr, this.options);
    } catch (err) {
      // Once per name server and topic until a good route comes: the periodic refresh asks every 30 s.
      const key = `${addr}\u0000${topic}`;
      if (!this.routesRefused.has(key)) {
        this.routesRefused.add(key);
        this.logger.warn((err as Error).message);
      }
      throw err;
    }
    this.routesRefused.delete(`${addr}\u0000${topic}`);
    this.mergeBrokerAddrs(route);
    return route;
  }

  private async fetchTopicRoute(topic: string): Promise<TopicRouteData> {
    const route = await this.queryTopicRoute(topic);
    const old = this.topicRouteTable.get(topic);
    this.topicRouteTable.set(topic, route);
    if (this.events.listening('routeChange') && (!old || JSON.stringify(old) !== JSON.stringify(route)))
      this.events.emit('routeChange', topic, route);
    return route;
  }

  private mergeBrokerAddrs(route: TopicRouteData): void {
    for (const b of route.brokerDatas) this.brokerAddrTable.set(b.brokerName, { ...b.brokerAddrs });
  }

  /** Registers a listener for route changes; returns the function that removes it. */
  onRouteChange(listener: RouteListener): () => void {
    // A listener that throws is logged; the route is stored and the other listeners still run.
    return this.events.on('routeChange', (topic, route) => {
      try {
        listener(topic, route);
      } catch (err) {
        log('route listener failed: %s', (err as Error).message);
      }
    });
  }

  /** Registers a taker of pushed replies (request–reply, reply-message.ts); returns the function that removes it. */
  onReplyMessage(listener: ReplyListener): () => void {
    this.replyListeners.add(listener);
    return () => this.replyListeners.delete(listener);
  }

  /**
   * Records a route learnt elsewhere without notifying listeners: the producer stores the TBW102 template
   * route under an auto-created topic's name, as Java does, so that its brokers get heartbeats and the
   * periodic refresh asks for the topic until the name server knows it.
   */
  setTopicRoute(topic: string, route: TopicRouteData): void {
    this.topicRouteTable.set(topic, route);
    this.mergeBrokerAddrs(route);
  }

  /**
   * Refreshes the routes of every cached topic and every topic a consumer subscribes to
   * (MQClientInstance.updateTopicRouteInfoFromNameServer).
   */
  async refreshAllRoutes(): Promise<void> {
    const topics = new Set(this.topicRouteTable.keys());
    for (const c of this.consumers.values()) for (const s of c.subscriptions()) topics.add(s.topic);
    await Promise.all(
      [...topics].map((t) =>
        this.getTopicRoute(t, { refresh: true }).catch((err: unknown) => {
          log('route refresh of %s failed: %s', t, (err as Error).message);
        }),
      ),
    );
  }

  /** Master address (id 0) of a broker, else any of its addresses. */
  findBrokerAddress(brokerName: string): string | undefined {
    const addrs = this.brokerAddrTable.get(brokerName);
    if (!addrs) return undefined;
    return addrs['0'] ?? Object.values(addrs)[0];
  }

  /** Master address only (sends and offset queries go to masters). */
  findBrokerMasterAddress(brokerName: string): string | undefined {
    return this.brokerAddrTable.get(brokerName)?.['0'];
  }

  /**
   * Address of broker `brokerId` (a pull's suggestWhichBrokerId), as Java's findBrokerAddressInSubscribe:
   * that id exactly; for a slave id, else the next id (id + 1, the other slave of a group with two);
   * else, unless `onlyThisBroker`, the broker's first address in id order (the master when it is
   * known). `slave` tells the caller to clear FLAG_COMMIT_OFFSET (docs/protocol-facts.md#flags-and-enums).
   */
  findBrokerAddressInSubscribe(
    brokerName: string,
    brokerId: number,
    onlyThisBroker = false,
  ): { addr: string; slave: boolean } | undefined {
    const addrs = this.brokerAddrTable.get(brokerName);
    if (!addrs) return undefined;
    const exact = addrs[String(brokerId)];
    if (exact) return { addr: exact, slave: brokerId !== 0 };
    if (brokerId !== 0) {
      const next = addrs[String(brokerId + 1)];
      if (next) return { addr: next, slave: true };
    }
    if (onlyThisBroker) return undefined;
    // Java iterates a HashMap<Long, String>: small ids come out in ascending order, as integer-like keys do here.
    const [id, addr] = Object.entries(addrs)[0] ?? [];
    return addr ? { addr, slave: id !== '0' } : undefined;
  }

  /**
   * Drops broker addresses that no cached route mentions any more (Java's cleanOfflineBroker, run before
   * each heartbeat), so that a broker removed from the cluster stops getting heartbeats.
   */
  private cleanOfflineBrokers(): void {
    if (this.routeFetches.size > 0) return;
    const live = new Set<string>();
    for (const route of this.topicRouteTable.values()) {
      for (const b of route.brokerDatas)
        for (const a of Object.values(b.brokerAddrs)) live.add(`${b.brokerName}\u0000${a}`);
    }
    for (const [name, addrs] of this.brokerAddrTable) {
      for (const [id, addr] of Object.entries(addrs)) if (!live.has(`${name}\u0000${addr}`)) delete addrs[id];
      if (Object.keys(addrs).length === 0) this.brokerAddrTable.delete(name);
    }
  }

  /** A snapshot of brokerName → (id → address). */
  brokerAddresses(): Map<string, Record<string, string>> {
    return new Map([...this.brokerAddrTable].map(([k, v]) => [k, { ...v }]));
  }

  /** The version the broker at `addr` reported in its last heartbeat answer. */
  brokerVersion(addr: string): number | undefined {
    return this.brokerVersionTable.get(addr);
  }

  // ---------------------------------------------------------------- producers and consumers

  registerProducer(group: string): void {
    if (this.producers.has(group)) {
      throw new MQClientError(`producer group ${group} is already registered in client ${this.clientId}`);
    }
    this.producers.add(group);
  }

  unregisterProducer(group: string): void {
    if (!this.producers.delete(group)) return;
    this.track(this.unregisterFromAllBrokers({ producerGroup: group }));
  }

  registerConsumer(group: string, consumer: ConsumerInner): void {
    if (this.consumers.has(group)) {
      throw new MQClientError(`consumer group ${group} is already registered in client ${this.clientId}`);
    }
    this.consumers.set(group, consumer);
  }

  async unregisterConsumer(group: string): Promise<void> {
    if (!this.consumers.delete(group)) return;
    await this.track(this.unregisterFromAllBrokers({ consumerGroup: group }));
  }

  /** The consumer registered for `group`, if any. */
  selectConsumer(group: string): ConsumerInner | undefined {
    return this.consumers.get(group);
  }

  private async unregisterFromAllBrokers(groups: { producerGroup?: string; consumerGroup?: string }): Promise<void> {
    const addrs = [...this.brokerAddrTable.values()].flatMap((a) => Object.values(a));
    await Promise.all(
      addrs.map((addr) =>
        this.unregisterClient(addr, groups).catch((err: unknown) => {
          log('unregister %o at %s failed: %s', groups, addr, (err as Error).message);
        }),
      ),
    );
  }

  /** Every broker address of the routes read so far (health()). */
  knownBrokerAddrs(): string[] {
    const out: string[] = [];
    for (const addrs of this.brokerAddrTable.values()) out.push(...Object.values(addrs));
    return out;
  }

  /** The HeartbeatData this process would send now (docs/protocol-facts.md#heartbeat-data). */
  heartbeatData(): HeartbeatData {
    return buildHeartbeatData(this.clientId, this.producers, this.consumers.values());
  }

  /**
   * HEART_BEAT to every known broker address (masters only when there is no consumer); skipped when the
   * process has neither producers nor consumers. Failures are logged (sendHeartbeat gives the outcome
   * per address).
   */
  async sendHeartbeatToAllBrokers(): Promise<void> {
    await this.sendHeartbeat();
  }

  /** sendHeartbeatToAllBrokers with the outcome per address. */
  async sendHeartbeat(): Promise<{ ok: string[]; failed: { addr: string; error: Error }[] }> {
    const result = { ok: [] as string[], failed: [] as { addr: string; error: Error }[] };
    this.cleanOfflineBrokers();
    if (this.producers.size === 0 && this.consumers.size === 0) return result;
    const mastersOnly = this.consumers.size === 0;
    const targets: string[] = [];
    for (const addrs of this.brokerAddrTable.values()) {
      for (const [id, addr] of Object.entries(addrs)) if (!mastersOnly || id === '0') targets.push(addr);
    }
    const body = encodeRequestBody(Operations.HEART_BEAT, this.heartbeatData());
    this.heartbeating++;
    try {
      await Promise.all(
        targets.map(async (addr) => {
          const error = await this.heartbeatTo(addr, body);
          if (error) result.failed.push({ addr, error });
          else result.ok.push(addr);
        }),
      );
    } finally {
      this.heartbeating--;
    }
    return result;
  }

  /** One HEART_BEAT to `addr`; the error, or null when the broker took it. */
  private async heartbeatTo(
    addr: string,
    body = encodeRequestBody(Operations.HEART_BEAT, this.heartbeatData()),
  ): Promise<Error | null> {
    const op = Operations.HEART_BEAT;
    try {
      const req = encodedOperationRequest(op, {}, body, this.ctx);
      const res = await this.remoting.invoke(addr, req, { timeoutMs: this.ctx.apiTimeoutMs });
      this.brokerVersionTable.set(addr, readReply(op, res, addr).version);
      this.lastHeartbeatAnswer.set(addr, this.options.clock.now());
      return null;
    } catch (err) {
      log('heartbeat to %s failed: %s', addr, (err as Error).message);
      return err as Error;
    }
  }

  /**
   * A connection to `addr` opened (Java 5.x's onChannelActive). When `addr` is a broker this
   * instance knows, it gets a heartbeat now, not at the next 30 s round: a consumer that learnt
   * its broker from a route that came after its start (its topic did not exist yet), or a broker
   * that restarted and forgot the group, would otherwise have no members there until then, and
   * its rebalance would find no consumer list. After the heartbeat every consumer rebalances.
   * As Java's tryLock: nothing while a heartbeat round is under way (it opened this connection,
   * or covers this broker anyway).
   */
  private onBrokerConnected(addr: string): void {
    if (!this.startPromise || this.shutdownPromise || this.heartbeating > 0 || this.connectBeats.has(addr)) return;
    if (this.producers.size === 0 && this.consumers.size === 0) return;
    let known = false;
    for (const addrs of this.brokerAddrTable.values()) {
      for (const [id, a] of Object.entries(addrs))
        if (a === addr && (this.consumers.size > 0 || id === '0')) known = true;
    }
    if (!known) return;
    this.connectBeats.add(addr);
    void this.track(
      this.heartbeatTo(addr).then((error) => {
        this.connectBeats.delete(addr);
        if (error || this.shutdownPromise) return;
        log('heartbeat to %s on its new connection; rebalancing', addr);
        for (const c of this.consumers.values()) c.doRebalance();
      }),
    );
  }

  private async persistAllConsumerOffsets(): Promise<void> {
    await Promise.all(
      [...this.consumers.values()].map((c) =>
        c
          .persistOffsets()
          .catch((err: unknown) => log('persistOffsets of %s failed: %s', c.groupName, (err as Error).message)),
      ),
    );
  }

  // -------------------------------------------------------------- broker-initiated requests (ClientRemotingProcessor)

  // Request headers are decoded by the table's codecs: a missing required field throws, which the
  // connection answers with SYSTEM_ERROR (Java's decodeCommandCustomHeader throws the same way).
  private registerBrokerRequestProcessors(): void {
    registerReplyMessageProcessor(this.remoting, this.replyListeners, this.options.clock);
    const notify = Operations.NOTIFY_CONSUMER_IDS_CHANGED;
    this.remoting.registerProcessor(notify.code, (req) => {
      const { consumerGroup } = notify.request.decode(req.extFields);
      log('NOTIFY_CONSUMER_IDS_CHANGED for %s', consumerGroup);
      this.consumers.get(consumerGroup)?.doRebalance();
      return null;
    });
    const running = Operations.GET_CONSUMER_RUNNING_INFO;
    this.remoting.registerProcessor(running.code, (req) => {
      const { consumerGroup } = running.request.decode(req.extFields);
      const c = this.consumers.get(consumerGroup);
      if (!c) return groupNotExist(req, consumerGroup);
      return createResponse(req, ResponseCode.SUCCESS, { body: c.runningInfo() });
    });
    const direct = Operations.CONSUME_MESSAGE_DIRECTLY;
    this.remoting.registerProcessor(direct.code, async (req, conn) => {
      const h = direct.request.decode(req.extFields);
      const c = this.consumers.get(h.consumerGroup);
      if (!c) return groupNotExist(req, h.consumerGroup);
      const msg = req.body ? decodeMessages(req.body)[0] : undefined;
      if (!msg) return createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'no message in the request body' });
      const refused = directTopicRefused(conn.remoteAddress, h.consumerGroup, msg, c);
      if (refused) {
        this.logger.warn(refused.message);
        return createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: refused.message });
      }
      const result = await c.consumeMessageDirectly(msg, h.brokerName ?? '');
      return createResponse(req, ResponseCode.SUCCESS, { body: direct.responseBody.encode(result) });
    });
    const status = Operations.GET_CONSUMER_STATUS_FROM_CLIENT;
    this.remoting.registerProcessor(status.code, (req) => {
      const { topic, group } = status.request.decode(req.extFields);
      // Java answers SUCCESS with an empty table for a group it does not hold (getConsumerStatus).
      const table = this.consumers.get(group)?.consumerStatus(topic) ?? [];
      return createResponse(req, ResponseCode.SUCCESS, { body: encodeGetConsumerStatusBody(table) });
    });
    this.remoting.registerProcessor(Operations.CHECK_TRANSACTION_STATE.code, (req, conn) =>
      serveCheckTransactionState(req, conn.remoteAddress, this.transactionCheckers),
    );
    const reset = Operations.RESET_CONSUMER_CLIENT_OFFSET;
    this.remoting.registerProcessor(reset.code, async (req, conn) => {
      const { group, topic } = reset.request.decode(req.extFields);
      const c = this.consumers.get(group);
      if (!c) {
        log('RESET_CONSUMER_CLIENT_OFFSET for unknown group %s', group);
        return null;
      }
      const offsets = new Map<string, number>();
      if (req.body && req.body.length > 0) {
        for (const [mq, offset] of reset.requestBody.decode(req.body).offsetTable) offsets.set(queueKey(mq), offset);
      }
      try {
        await this.checkResetOffsets(conn.remoteAddress, group, topic, offsets, c);
      } catch (err) {
        this.logger.warn((err as Error).message);
        return null;
      }
      await c.resetOffset(topic, offsets);
      return null;
    });
  }

  /**
   * RESET_CONSUMER_CLIENT_OFFSET as Java's resetOffset semantics allow it: each offset of a queue
   * the consumer holds lies within the queue's [minOffset, maxOffset] on its broker (what the
   * broker's own resetOffsetByTimestamp computes: a search clamped to the queue), else the whole
   * reset is refused (BrokerRequestRefusedError) and no offset moves. A table larger than
   * maxRouteQueues is refused before anything is asked. Java's client applies any offset it is sent.
   */
  private async checkResetOffsets(
    addr: string,
    group: string,
    topic: string,
    offsets: Map<string, number>,
    c: ConsumerInner,
  ): Promise<void> {
    const code = Operations.RESET_CONSUMER_CLIENT_OFFSET.code;
    const refuse = (field: string, value: string | number, why: string, option?: string): never => {
      throw new BrokerRequestRefusedError({
        addr,
        requestCode: code,
        field,
        value,
        why: `${why} (group ${group}, topic ${topic}); the offsets stay where they are`,
        option,
      });
    };
    if (offsets.size > this.options.maxRouteQueues) {
      refuse(
        'offsetTable.size',
        offsets.size,
        `exceeds maxRouteQueues (${this.options.maxRouteQueues}); raise the option maxRouteQueues`,
        'maxRouteQueues',
      );
    }
    for (const [key, offset] of offsets) {
      if (!Number.isSafeInteger(offset) || offset < 0)
        refuse(`offsetTable[${key}]`, offset, 'is not an offset (a non-negative integer below 2^53)');
    }
    const held = c.consumerStatus(topic).filter(([mq]) => offsets.has(queueKey(mq)));
    await Promise.all(
      held.map(async ([mq]) => {
        const key = queueKey(mq);
        const offset = offsets.get(key)!;
        const brokerAddr = this.findBrokerAddress(mq.brokerName) ?? addr;
        let min: number;
        let max: number;
        try {
          [min, max] = await Promise.all([this.getMinOffset(brokerAddr, mq), this.getMaxOffset(brokerAddr, mq)]);
        } catch (err) {
          refuse(
            `offsetTable[${key}]`,
            offset,
            `cannot be checked: the queue's min/max offsets from ${brokerAddr} failed: ${(err as Error).message.split('\n')[0]}`,
          );
          return;
        }
        if (offset < min || offset > max)
          refuse(`offsetTable[${key}]`, offset, `is outside the queue's [${min}, ${max}] on ${brokerAddr}`);
      }),
    );
  }
}

/**
 * GetConsumerStatusBody as the Java client writes it: `{"consumerTable":{},"messageQueueTable":
 * {{MessageQueue}:offset,…}}` (fastjson, fields in name order, MessageQueue objects as map keys).
 * protocol/ has no codec for it (the row's response body is raw); the broker reads messageQueueTable.
 */
function encodeGetConsumerStatusBody(table: [MessageQueue, number][]): Buffer {
  const messageQueueTable = new Map(table.map(([mq, offset]) => [messageQueueToJson(mq), offset]));
  return Buffer.from(toJavaJson({ consumerTable: {}, messageQueueTable }, { nonStandard: true }), 'utf8');
}

/**
 * CONSUME_MESSAGE_DIRECTLY hands a message to the group's handler: only one of a topic the group
 * subscribes (its own retry topic included, whose messages carry RETRY_TOPIC, the topic they were
 * first sent to). Anything else would run the application's handler on a message it never asked
 * for. Java's consumeMessageDirectly does not look.
 */
function directTopicRefused(
  addr: string,
  group: string,
  msg: MessageExt,
  c: ConsumerInner,
): BrokerRequestRefusedError | null {
  const topics = new Set(c.subscriptions().map((s) => s.topic));
  if (topics.has(msg.topic)) return null;
  return new BrokerRequestRefusedError({
    addr,
    requestCode: Operations.CONSUME_MESSAGE_DIRECTLY.code,
    field: 'topic',
    value: msg.topic,
    why: `is not subscribed by consumer group ${group}; the message was not handed to the handler`,
  });
}

/** Java's answer for a group this process does not hold. */
function groupNotExist(req: RemotingCommand, group: string): RemotingCommand {
  return createResponse(req, ResponseCode.SYSTEM_ERROR, {
    remark: `The Consumer Group <${group}> not exist in this consumer`,
  });
}
