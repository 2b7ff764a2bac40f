import createDebug from '../debug.js';
import {
  Operations,
  type HeartbeatData,
  type Operation,
  type OperationRequest,
  type TopicRouteData,
} from '../../protocol/internal.js';
import { RemotingClient } from '../remoting/index.js';
import {
  buildClientId,
  resolveClientOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from './client-options.js';
import type { ConsumerInner } from './consumer-inner.js';
import { MQClientError } from './errors.js';
import { checkSharedOptions } from './instance-sharing.js';
import { buildHeartbeatData } from './heartbeat-data.js';
import { encodeHeartbeatBodies, heartbeatRound, HeartbeatV2State, sendHeartbeatTo } from './heartbeat.js';
import type { HeartbeatRoundResult, HeartbeatStats } from './heartbeat.js';
import { MQClientAPI } from './mq-client-api.js';
import { readCallReply, type CallReply } from './operation-call.js';
import { registerReplyMessageProcessor, type ReplyListener } from './reply-message.js';
import { ScheduledTask } from './scheduled-task.js';
import type { TransactionCheckHandler } from './transaction-check.js';
import { serveBrokerRequests } from './broker-requests.js';
import { BrokerAddressTable } from './broker-address-table.js';
import { NameServerClient, type NameServerStatus } from './name-server-client.js';
import { TopicRouteTable, type RouteListener } from './topic-route-table.js';
import { FastRouteRefresh } from './route-fast-refresh.js';
import { AddressServerPoller, ADDRESS_SERVER_FIRST_POLL_MS, ADDRESS_SERVER_POLL_MS } from './address-server.js';
import { LoggerSet, type Logger } from '../logger.js';

const log = createDebug('rocketwire:client');

export type { NameServerStatus } from './name-server-client.js';

export type { RouteListener } from './topic-route-table.js';

const instances = new Map<string, MQClientInstance>();

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
  private readonly brokerAddrTable = new BrokerAddressTable();
  /** Broker address → the `version` its last heartbeat answer carried. */
  readonly brokerVersionTable = new Map<string, number>();
  private readonly producers = new Set<string>();
  /** Transaction producers' check-back handlers by group (CHECK_TRANSACTION_STATE, transaction-check.ts). */
  readonly transactionCheckers = new Map<string, TransactionCheckHandler>();
  private readonly consumers = new Map<string, ConsumerInner>();
  private readonly routes: TopicRouteTable;
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
  private readonly nameServers: NameServerClient;
  /** Route refreshes on a broker's connection failure (route-fast-refresh.ts); null when the option is off. */
  readonly fastRouteRefresh: FastRouteRefresh | null;
  /** The name server list's source when no namesrvAddr is given (address-server.ts); null otherwise. */
  readonly addressServer: AddressServerPoller | null;
  /** Broker address → clock time of its last answered heartbeat (health()). */
  readonly lastHeartbeatAnswer = new Map<string, number>();
  readonly heartbeatV2: HeartbeatV2State | null;
  readonly heartbeatStats: HeartbeatStats = { full: 0, withoutSub: 0, bodyBytes: 0 };

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
    } else {
      checkSharedOptions(resolved, inst.options, clientId);
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
    this.heartbeatV2 = options.useHeartbeatV2 ? new HeartbeatV2State() : null;
    this.nameServers = new NameServerClient({
      remoting,
      stamp: this.ctx,
      options,
      logger: this.logger,
      shuttingDown: () => this.shutdownPromise !== null,
    });
    this.routes = new TopicRouteTable({
      nameServers: this.nameServers,
      brokerAddrTable: this.brokerAddrTable,
      options,
      logger: this.logger,
    });
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
    this.addressServer = options.addressServerUrl
      ? new AddressServerPoller({
          url: options.addressServerUrl,
          clock: options.clock,
          logger: this.logger,
          apply: (addrs) => this.nameServers.setAddresses(addrs),
          status: (s) => this.nameServers.report(s),
        })
      : null;
    if (this.addressServer) {
      const poller = this.addressServer;
      const task = () => poller.poll();
      this.tasks.push(new ScheduledTask('fetchNameServerAddr', ADDRESS_SERVER_POLL_MS, task, log, options.clock));
    }
    this.registerBrokerRequestProcessors();
    // Java 5.x's channel event listener (enableHeartbeatChannelEventListener, on by default): a new
    // connection to a known broker gets a heartbeat at once, then the consumers rebalance
    remoting.onConnected((addr) => this.onBrokerConnected(addr));
    remoting.onPeerMisbehaved((err) => this.logger.warn(err.message));
    this.fastRouteRefresh = options.fastRouteRefresh
      ? new FastRouteRefresh({
          clock: options.clock,
          minIntervalMs: options.fastRouteRefreshIntervalMs,
          maxPerSecond: options.fastRouteRefreshMaxPerSecond,
          topicsOfBroker: (addr) => this.routes.topicsOfBroker(addr),
          refresh: (topic) => this.getTopicRoute(topic, { refresh: true }),
          maxFollowUpMs: options.pollNameServerIntervalMs,
        })
      : null;
    remoting.onConnectionLost((addr, err) => {
      this.heartbeatV2?.forget(addr);
      if (this.startPromise && !this.shutdownPromise) this.fastRouteRefresh?.brokerFailed(addr, err);
    });
  }

  /** Starts the scheduled tasks once; later calls resolve at once. */
  start(): Promise<void> {
    if (this.shutdownPromise) return Promise.reject(new MQClientError(`client instance ${this.clientId} is shut down`));
    this.startPromise ??= Promise.resolve().then(async () => {
      // Java fetches the list once at start (its failure only logged: checkNameServer is what rejects)
      await this.addressServer?.ensureList().catch(() => undefined);
      const [routes, heartbeat, persist, addressServer] = this.tasks;
      addressServer?.start(ADDRESS_SERVER_FIRST_POLL_MS);
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
      this.fastRouteRefresh?.stop();
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
    const done = (): boolean => this.pending.delete(p);
    p.then(done, done);
    return p;
  }

  // ---------------------------------------------------------------- name server and routes

  /**
   * The call path to the name servers (see nameServerRequest for the failover): SUCCESS or one of
   * the row's answer codes, any other code a BrokerError. Errors say "name server" rather than
   * the address that answered, as they always have.
   */
  async callNameServer<O extends Operation>(op: O, header: OperationRequest<O>): Promise<CallReply<O>> {
    const { res } = await this.nameServers.request(op, header);
    return readCallReply(op, res, 'name server');
  }

  /**
   * The check a client's start() makes: one GET_ROUTEINFO_BY_TOPIC for `topic`, each name server
   * given `connectTimeoutMs`. Any answer, TOPIC_NOT_EXIST included, shows a name server is there;
   * NameServerUnavailableError (retriable, naming every address and its error) when none answered.
   */
  async checkNameServer(topic: string): Promise<void> {
    // AddressServerError when the address server gave no list yet
    await this.addressServer?.ensureList();
    const op = Operations.GET_ROUTEINFO_BY_TOPIC;
    // quiet: the caller's start() rejects with the failures, which is their report
    await this.nameServers.request(op, { topic }, this.options.connectTimeoutMs, true);
  }

  /** Registers a taker of pushed replies (request–reply, reply-message.ts); returns the function that removes it. */
  onReplyMessage(listener: ReplyListener): () => void {
    this.replyListeners.add(listener);
    return () => this.replyListeners.delete(listener);
  }

  /**
   * The topic's route, from the cache unless `refresh` or not cached. A topic the name server does not
   * know raises BrokerError with code TOPIC_NOT_EXIST (17).
   */
  getTopicRoute(topic: string, opts?: { refresh?: boolean }): Promise<TopicRouteData> {
    return this.routes.get(topic, opts);
  }

  /** The route of `topic` as last fetched, without asking anybody. */
  cachedTopicRoute(topic: string): TopicRouteData | undefined {
    return this.routes.cached(topic);
  }

  /** GET_ROUTEINFO_BY_TOPIC without touching the caches (used for the TBW102 template route). */
  queryTopicRoute(topic: string): Promise<TopicRouteData> {
    return this.routes.query(topic);
  }

  /** Registers a listener for route changes; returns the function that removes it. */
  onRouteChange(listener: RouteListener): () => void {
    return this.routes.onChange(listener);
  }

  /** A route learnt elsewhere, recorded without notifying listeners (TopicRouteTable.set). */
  setTopicRoute(topic: string, route: TopicRouteData): void {
    this.routes.set(topic, route);
  }

  /**
   * Refreshes the routes of every cached topic and every topic a consumer subscribes to
   * (MQClientInstance.updateTopicRouteInfoFromNameServer).
   */
  async refreshAllRoutes(): Promise<void> {
    const topics = new Set(this.routes.topics());
    for (const c of this.consumers.values()) for (const s of c.subscriptions()) topics.add(s.topic);
    await Promise.all(
      [...topics].map((t) =>
        this.getTopicRoute(t, { refresh: true }).catch((err: unknown) => {
          log('route refresh of %s failed: %s', t, (err as Error).message);
        }),
      ),
    );
  }

  /** The last name-server answer: address and clock time (health()). */
  get lastNameServerAnswer(): { addr: string; atMs: number } | null {
    return this.nameServers.lastAnswer;
  }

  /** The name servers asked now: namesrvAddr's, or the address server's latest list. */
  nameServerAddresses(): readonly string[] {
    return this.nameServers.addresses;
  }

  /** Registers a listener for name-server failures and recoveries; returns the function that removes it. */
  onNameServerStatus(listener: (status: NameServerStatus) => void): () => void {
    return this.nameServers.onStatus(listener);
  }

  /** Master address (id 0) of a broker, else any of its addresses. */
  findBrokerAddress(brokerName: string): string | undefined {
    return this.brokerAddrTable.findBrokerAddress(brokerName);
  }

  /** Master address only (sends and offset queries go to masters). */
  findBrokerMasterAddress(brokerName: string): string | undefined {
    return this.brokerAddrTable.findBrokerMasterAddress(brokerName);
  }

  /** Address of broker `brokerId` (a pull's suggestWhichBrokerId): BrokerAddressTable.findBrokerAddressInSubscribe. */
  findBrokerAddressInSubscribe(
    brokerName: string,
    brokerId: number,
    onlyThisBroker = false,
  ): { addr: string; slave: boolean } | undefined {
    return this.brokerAddrTable.findBrokerAddressInSubscribe(brokerName, brokerId, onlyThisBroker);
  }

  /** A snapshot of brokerName → (id → address). */
  brokerAddresses(): Map<string, Record<string, string>> {
    return this.brokerAddrTable.snapshot();
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
    // Never rejects: each broker's failure is caught and logged (unregisterFromAllBrokers).
    void this.track(this.unregisterFromAllBrokers({ producerGroup: group }));
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
    const addrs = this.brokerAddrTable.addresses(false);
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
    return this.brokerAddrTable.addresses(false);
  }

  /** The HeartbeatData this process would send now (docs/protocol-facts.md#heartbeat-data). */
  heartbeatData(): HeartbeatData {
    return buildHeartbeatData(this.clientId, this.producers, this.consumers.values());
  }

  /**
   * HEART_BEAT to every known broker address (masters only when there is no consumer); skipped when the process
   * has neither producers nor consumers. Failures are logged (sendHeartbeat gives the outcome per address).
   */
  async sendHeartbeatToAllBrokers(rebalance = false): Promise<void> {
    await this.sendHeartbeat(rebalance);
  }

  /**
   * sendHeartbeatToAllBrokers with the outcome per address. `rebalance`: a rebalance changed
   * subVersions, so heartbeat V2 sends every broker the full data (Java's isRebalance).
   */
  async sendHeartbeat(rebalance = false): Promise<HeartbeatRoundResult> {
    this.routes.cleanOfflineBrokers();
    if (this.producers.size === 0 && this.consumers.size === 0) return { ok: [], failed: [] };
    if (rebalance) this.heartbeatV2?.forgetAll();
    // producers only: masters take their heartbeats; a consumer's go to slaves too
    const targets = this.brokerAddrTable.addresses(this.consumers.size === 0);
    const bodies = encodeHeartbeatBodies(this.heartbeatData(), this.heartbeatV2 !== null);
    this.heartbeating++;
    try {
      return await heartbeatRound(targets, (addr) => this.heartbeatTo(addr, bodies));
    } finally {
      this.heartbeating--;
    }
  }

  /** One HEART_BEAT to `addr` (heartbeat.ts); the error, or null when the broker took it. */
  private heartbeatTo(addr: string, bodies = encodeHeartbeatBodies(this.heartbeatData(), this.heartbeatV2 !== null)) {
    return sendHeartbeatTo(this, this.ctx, addr, bodies);
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
    this.heartbeatV2?.forget(addr);
    if (!this.startPromise || this.shutdownPromise || this.heartbeating > 0 || this.connectBeats.has(addr)) return;
    if (this.producers.size === 0 && this.consumers.size === 0) return;
    if (!this.brokerAddrTable.addresses(this.consumers.size === 0).includes(addr)) return;
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

  private registerBrokerRequestProcessors(): void {
    registerReplyMessageProcessor(this.remoting, this.replyListeners, this.options.clock);
    serveBrokerRequests(this.remoting, {
      consumers: this.consumers,
      transactionCheckers: this.transactionCheckers,
      logger: this.logger,
      maxRouteQueues: this.options.maxRouteQueues,
      findBrokerAddress: (brokerName) => this.findBrokerAddress(brokerName),
      getMinOffset: (addr, mq) => this.getMinOffset(addr, mq),
      getMaxOffset: (addr, mq) => this.getMaxOffset(addr, mq),
    });
  }
}
