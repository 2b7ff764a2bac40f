import createDebug from '../debug.js';
import { MessageSysFlag, UniqKeyGenerator, type MessageExt, type MessageQueue } from '../../protocol/index.js';
import {
  defaultClientIp,
  MQClientInstance,
  resolveInstanceName,
  takeNamespace,
  wrapNamespace,
  type CallReply,
  type NamespaceOption,
} from '../client/index.js';
import { systemClock, type Clock } from '../clock.js';
import { instanceHealth, type BrokerHealth, type NameServerHealth } from '../client/health.js';
import { brokerNameOf, refreshOnNotLeader } from '../client/static-topic.js';
import { BrokerError, RemotingError } from '../remoting/index.js';
import { NoRouteError, ProducerStateError, SendFailedError, type SendAttemptFailure } from './errors.js';
import { validateTopic, type Message } from './message.js';
import { prepareBatch, prepareSingle, sendHeader, type Prepared } from './send-preparation.js';
import { resolveProducerOptions, type ProducerOptions, type ResolvedProducerOptions } from './producer-options.js';
import type { SendResult } from './send-result.js';
import { toSendResult } from './send-response.js';
import { bodyBytes, SendPath } from './send-path.js';
import { PublishInfoTable } from './publish-info-table.js';
import { RequestReply, type RequestMessageLike } from './request-reply.js';
import { ProducerTrace } from '../trace/trace-hooks.js';
import type { MessagingTracing } from '../metrics/index.js';
import { producerTracing, tracedSend } from './traced-send.js';
import {
  namespacedBatchMember,
  namespacedMessage,
  namespacedSendOptions,
  resultWithoutNamespace,
} from './producer-namespace.js';
import { messagesIn, ProducerEvents, ProducerInstrumentation, type ProducerEventMap } from './events.js';

const log = createDebug('rocketwire:producer');

import type { SendOptions } from './send-options.js';
import { recallMessage } from './recall.js';

export { selectMessageQueueByHash, type MessageQueueSelector, type SendOptions } from './send-options.js';

/**
 * Producer.health(): plain data for a readiness probe.
 * @category Producing
 */
export interface ProducerHealth {
  /** The producer's state (CREATED, RUNNING, SHUTDOWN). */
  state: string;
  /** The producer runs and a name server has answered: what a readiness probe returns. */
  ready: boolean;
  /** The producer group. */
  group: string;
  /** The last name server that answered, and when. */
  nameServer: NameServerHealth;
  /** Per broker known from the routes: its last answered heartbeat. */
  brokers: BrokerHealth[];
}

/**
 * What `producer.stats()` returns: sends since start.
 * @category Producing
 */
export interface ProducerStats {
  /** Sends that succeeded. */
  sent: number;
  /** Sends that failed after their last attempt. */
  failed: number;
  /** Attempts that failed and were retried. */
  retries: number;
}

/**
 * A producer (DefaultMQProducer): routes from the shared client instance, round-robin queue selection,
 * retries on another broker, zlib compression of large bodies, batches and the TBW102 auto-create flow.
 * @category Producing
 */
export class Producer {
  /** The options with every default filled in. */
  readonly options: ResolvedProducerOptions;
  private instance: MQClientInstance | null = null;
  private state: 'CREATED' | 'RUNNING' | 'SHUTDOWN' = 'CREATED';
  private readonly publishInfo: PublishInfoTable;
  private readonly uniqKeys: UniqKeyGenerator;
  private removeRouteListener: (() => void) | null = null;
  private readonly counters: ProducerStats = { sent: 0, failed: 0, retries: 0 };
  /** Send budgets and bornTimestamp read this clock (the client option `clock`). */
  private readonly clock: Clock;
  /** Request–reply (request-reply.ts): the pending requests, registered with the client instance. */
  private readonly replies: RequestReply = new RequestReply(this);
  /** enableTrace: the Pub records' dispatcher (lib/trace). */
  private trace: ProducerTrace | null = null;
  /** The `tracing` option's spans (lib/metrics/tracing.ts); null when off. */
  private tracing: MessagingTracing | null = null;

  /** The `namespace` option (producer-namespace.ts). */
  protected readonly namespace: string | undefined;
  /** The 'send', 'connect', 'disconnect', 'requestTimeout' events and the metrics (events.ts). */
  private readonly instr = new ProducerInstrumentation();
  private readonly metricsOptions: ProducerOptions['metrics'];
  /** Fault strategy, back-pressure and autoBatch (send-path.ts). */
  private readonly sendPath: SendPath;

  constructor(options: ProducerOptions & NamespaceOption) {
    const { namespace, rest } = takeNamespace(options);
    this.namespace = namespace;
    this.options = resolveProducerOptions(namespace ? { ...rest, group: wrapNamespace(namespace, rest.group) } : rest);
    this.publishInfo = new PublishInfoTable(this.options);
    this.clock = this.options.client.clock ?? systemClock;
    this.metricsOptions = options.metrics;
    // UNIQ_KEY starts with the host's address, as MessageClientIDSetter's does.
    this.uniqKeys = new UniqKeyGenerator({ ip: this.options.client.clientIp ?? defaultClientIp() });
    this.sendPath = new SendPath(this.options, this.clock, this.uniqKeys, {
      sendPrepared: (p, o) => this.sendPrepared(p, o, false) as Promise<SendResult>,
      ensureRunning: () => this.ensureRunning(),
    });
  }

  /** The client instance (after start()); internal: tests reach it as `producer['clientInstance']`. */
  protected get clientInstance(): MQClientInstance {
    if (!this.instance)
      throw new ProducerStateError(this.state, `producer ${this.options.group} is not started: call start() first`);
    return this.instance;
  }

  /**
   * Connects: rejects with NameServerUnavailableError (retriable) when no name server answers within
   * connectTimeoutMs, unless startWithoutNameServer; a rejected start() may be called again.
   */
  async start(): Promise<void> {
    if (this.state !== 'CREATED')
      throw new ProducerStateError(
        this.state,
        `producer ${this.options.group} is ${this.state === 'RUNNING' ? 'already started' : 'shut down'}: start() can be called once`,
      );
    this.tracing = await producerTracing(this.options);
    const instance = MQClientInstance.acquire({
      ...this.options.client,
      instanceName: resolveInstanceName(this.options.client.instanceName),
    });
    try {
      instance.registerProducer(this.options.group);
    } catch (err) {
      await instance.release();
      throw err;
    }
    if (!this.options.client.startWithoutNameServer) {
      try {
        // Any answer (TOPIC_NOT_EXIST included) shows a name server is there (MQClientInstance#checkNameServer).
        await instance.checkNameServer(this.options.createTopicKey);
      } catch (err) {
        // Nothing else was acquired: back to CREATED, so start() may be called again.
        instance.unregisterProducer(this.options.group);
        await instance.release();
        throw err;
      }
    }
    this.instance = instance;
    this.instr.attach(instance.remoting);
    await this.instr.start(this.metricsOptions, instance.clientId);
    const stopRoutes = instance.onRouteChange((topic, route) => this.publishInfo.onRouteChange(topic, route));
    const stopNameServer = instance.onNameServerStatus((s) => {
      if (s.error) this.instr.emit('nameServerError', { addr: s.addr, error: s.error });
      else this.instr.emit('nameServerReachable', { addr: s.addr });
    });
    this.removeRouteListener = () => {
      stopRoutes();
      stopNameServer();
    };
    this.replies.attach(instance);
    await instance.start();
    this.state = 'RUNNING';
    this.sendPath.start(instance, () => this.publishInfo.anyTopic());
    if (this.options.enableTrace)
      this.trace = new ProducerTrace({
        client: this.options.client,
        group: this.options.group,
        traceTopic: this.options.traceTopic,
      });
    await instance.sendHeartbeatToAllBrokers();
    log('producer %s started as %s', this.options.group, instance.clientId);
  }

  /**
   * Unregisters from the brokers and releases the client instance. The last user of an instance
   * waits for the brokers to acknowledge the UNREGISTER_CLIENT, which is a full API timeout for a
   * broker that does not answer; with `timeoutMs`, it waits at most that long, then closes the
   * instance's connections (the unregistration is a courtesy: a broker forgets a producer whose
   * heartbeats stop anyway).
   */
  async shutdown(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.state !== 'RUNNING') {
      this.state = 'SHUTDOWN';
      return;
    }
    this.state = 'SHUTDOWN';
    await this.sendPath.shutdown();
    await this.trace?.shutdown();
    const instance = this.instance!;
    this.removeRouteListener?.();
    this.replies.detach();
    instance.unregisterProducer(this.options.group);
    const released = instance.release().finally(() => this.instr.detach());
    const { timeoutMs } = options;
    if (timeoutMs === undefined) return released;
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('expired'), Math.max(0, timeoutMs));
    });
    const outcome = await Promise.race([released.then(() => 'released' as const), expired]);
    this.clock.clearTimeout(timer!);
    if (outcome === 'expired') {
      // Only the last user's release is still waiting: no other producer or consumer uses these connections.
      log(
        'producer %s: brokers did not acknowledge the unregistration within %d ms; closing',
        this.options.group,
        timeoutMs,
      );
      await instance.remoting.close();
      await released;
    }
  }

  /** start(), under the name node-postgres and the MongoDB driver use. */
  connect(): Promise<void> {
    return this.start();
  }

  /** shutdown(), under the name Node clients use. */
  close(options: { timeoutMs?: number } = {}): Promise<void> {
    return this.shutdown(options);
  }

  /** `await using producer = new Producer(…)` shuts it down at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdown();
  }

  /**
   * What a readiness probe needs, as plain data: the state, the last name-server answer and the
   * last answered heartbeat per broker. `ready` is true when running and a name server answered.
   */
  health(): ProducerHealth {
    const inst = instanceHealth(this.instance);
    return {
      state: this.state,
      ready: this.state === 'RUNNING' && inst.nameServer.lastAnswer !== null,
      group: this.options.group,
      ...inst,
    };
  }

  /** Sends since start: succeeded, failed, retried. */
  stats(): ProducerStats {
    return { ...this.counters };
  }

  /**
   * Listens to an event of the producer (ProducerEvents: 'send', 'requestTimeout', 'connect',
   * 'disconnect'; payloads in events.ts). Returns the function that removes this listener.
   */
  on<E extends keyof ProducerEventMap>(event: E, listener: (...args: ProducerEventMap[E]) => void): () => void {
    return this.instr.on(event, listener);
  }

  /** The events' names, as KafkaJS's `producer.events`: `producer.on(producer.events.SEND, …)`. */
  get events(): typeof ProducerEvents {
    return ProducerEvents;
  }

  /** Publish queues of `topic`, asking the name server when not known (auto-create via TBW102 if absent). */
  async fetchPublishMessageQueues(topic: string): Promise<MessageQueue[]> {
    this.ensureRunning();
    return [
      ...(
        await this.publishInfo.find(
          this.instance!,
          validateTopic(wrapNamespace(this.namespace, topic), this.options.createTopicKey),
        )
      ).queues,
    ];
  }

  /** Sends one message and waits for the broker's answer (SEND_MESSAGE_V2). */
  async send(msg: Message, opts: SendOptions = {}): Promise<SendResult> {
    this.ensureRunning();
    // Without tracing or a namespace (the usual case), no wrapper's async frame on every send.
    if (this.tracing === null && !this.namespace) return this.sendOne(msg, opts);
    return tracedSend(this.tracing, msg, async (traced) => {
      const r = await this.sendOne(
        namespacedMessage(this.namespace, traced),
        namespacedSendOptions(this.namespace, opts),
      );
      return resultWithoutNamespace(this.namespace, r);
    });
  }

  /** One message (namespace already applied) through back-pressure, the accumulator or a direct send. */
  private sendOne(m: Message, opts: SendOptions): Promise<SendResult> {
    return this.sendPath.send(
      m,
      opts,
      (o) => this.sendPrepared(prepareSingle(this.options, this.uniqKeys, m), o, false) as Promise<SendResult>,
    );
  }

  /** Sends one message without waiting for an answer; a single attempt, as in Java. */
  async sendOneway(msg: Message, opts: SendOptions = {}): Promise<void> {
    this.ensureRunning();
    await tracedSend(this.tracing, msg, async (m) => {
      await this.sendPrepared(
        prepareSingle(this.options, this.uniqKeys, namespacedMessage(this.namespace, m)),
        namespacedSendOptions(this.namespace, opts),
        true,
      );
    });
  }

  /** Withdraws a timer message before it is delivered (Java's recallMessage, recall.ts); resolves to its id. */
  async recallMessage(topic: string, recallHandle: string): Promise<string> {
    this.ensureRunning();
    const { group, createTopicKey, sendMsgTimeoutMs: timeoutMs } = this.options;
    const ctx = { instance: this.instance!, publishInfo: this.publishInfo, group, createTopicKey, timeoutMs };
    return recallMessage({ ...ctx, namespace: this.namespace }, topic, recallHandle);
  }

  /** Sends messages of one topic in one SEND_BATCH_MESSAGE (no delay, no retry topics, never compressed). */
  async sendBatch(msgs: readonly Message[], opts: SendOptions = {}): Promise<SendResult> {
    this.ensureRunning();
    const ns = this.namespace;
    const bytes = msgs.reduce((n, m) => n + bodyBytes(m), 0);
    const r = (await this.sendPath.gate(msgs[0]?.topic ?? '', bytes, namespacedSendOptions(ns, opts), (o) =>
      this.sendPrepared(
        prepareBatch(
          this.options,
          this.uniqKeys,
          msgs.map((m) => namespacedBatchMember(ns, m)),
        ),
        o,
        false,
      ),
    )) as SendResult;
    return resultWithoutNamespace(ns, r);
  }

  /** enableTrace: the EndTransaction record of a transaction this producer ended (transaction-producer.ts). */
  protected traceEndTransaction(e: Parameters<ProducerTrace['onEndTransaction']>[0]): void {
    this.trace?.onEndTransaction(e);
  }

  /**
   * Transactions (transaction-producer.ts): one synchronous send of `msg` as a half message, its
   * properties written by `properties` (the message's own plus TRAN_MSG and PGROUP), sysFlag
   * TRANSACTION_PREPARED, as Java's sendKernelImpl sets it for TRAN_MSG=true.
   */
  protected async sendHalfMessage(
    msg: Message,
    properties: (msg: Message, uniqKey: string) => string,
    opts: SendOptions = {},
  ): Promise<SendResult> {
    this.ensureRunning();
    // the namespace wraps the topic as for send (TransactionMQProducer#sendMessageInTransaction)
    const p = prepareSingle(this.options, this.uniqKeys, namespacedMessage(this.namespace, msg), properties);
    p.sysFlag |= MessageSysFlag.TRANSACTION_PREPARED_TYPE;
    const r = (await this.sendPrepared(p, namespacedSendOptions(this.namespace, opts), false)) as SendResult;
    return resultWithoutNamespace(this.namespace, r);
  }

  /**
   * Sends `msg` as a request and resolves with the reply (Java's DefaultMQProducer#request): the
   * message carries CORRELATION_ID, REPLY_TO_CLIENT and TTL; a replier answers with
   * `createReplyMessage` + `send` (or `sendReply`); no reply within `timeoutMs` of the call is a
   * RequestTimeoutError naming the correlation id. A failed send rejects with the send's error.
   * `opts` picks the queue as for send (Java's request with a selector or a MessageQueue).
   */
  async request(msg: Message, timeoutMs: number, opts: Omit<SendOptions, 'timeoutMs'> = {}): Promise<MessageExt> {
    this.ensureRunning();
    return this.replies.request(msg, timeoutMs, opts);
  }

  /** Sends the reply to a request message a consumer received (`createReplyMessage(request, body)` + `send`). */
  async sendReply(request: RequestMessageLike, body: Message['body'], opts: SendOptions = {}): Promise<SendResult> {
    this.ensureRunning();
    return this.replies.sendReply(request, body, opts);
  }

  private ensureRunning(): void {
    if (this.state !== 'RUNNING')
      throw new ProducerStateError(
        this.state,
        `producer ${this.options.group} is ${this.state === 'CREATED' ? 'not started: call start() first' : 'shut down'}`,
      );
  }

  private async sendPrepared(p: Prepared, opts: SendOptions, oneway: boolean): Promise<SendResult | void> {
    const begin = this.clock.now();
    const budget = opts.timeoutMs ?? this.options.sendMsgTimeoutMs;
    // A known route is read without awaiting: no time passes before the first attempt then.
    const cached = opts.queue ? null : this.publishInfo.cached(p.topic);
    const info = opts.queue ? null : (cached ?? (await this.publishInfo.find(this.instance!, p.topic)));
    const faults = this.sendPath.faults;
    // As in Java, only sends that pick their own queue are retried: a oneway send, or one to a queue the
    // caller chose (ordered sends), gets a single attempt so that it never lands on another queue.
    const times = oneway || opts.selector || opts.queue ? 1 : 1 + this.options.retryTimesWhenSendFailed;
    const failures: SendAttemptFailure[] = [];
    let lastBrokerName: string | undefined;
    let timedOut = false;
    for (let attempt = 0; attempt < times; attempt++) {
      const elapsed = attempt === 0 && (cached !== null || opts.queue) ? 0 : this.clock.now() - begin;
      if (elapsed >= budget) {
        timedOut = true;
        break;
      }
      const mq =
        opts.queue ??
        (opts.selector
          ? opts.selector(info!.queues, p.msg, opts.arg)
          : faults.selectOneMessageQueue(info!, lastBrokerName, attempt > 0));
      // Only sends that pick their own queue record their broker's latency (Java's sendDefaultImpl), when on.
      const fault = info && !opts.selector && faults.enabled ? this.clock.now() : -1;
      // Answered sends only (as Java's 5.x clients, which have no oneway): timed when observed.
      const t0 = !oneway && this.instr.observed ? this.clock.now() : -1;
      try {
        const r = await this.sendKernel(p, mq, budget - elapsed, oneway);
        if (fault >= 0) faults.onAttempt(mq.brokerName, this.clock.now() - fault);
        this.counters.sent++;
        if (t0 >= 0)
          this.instr.sendDone(
            p.topic,
            mq,
            messagesIn(p.batch, p.uniqMsgId),
            this.clock.now() - t0,
            (r as SendResult).status,
          );
        return r;
      } catch (err) {
        const e = err as Error;
        if (fault >= 0) faults.onAttempt(mq.brokerName, this.clock.now() - fault, e);
        if (t0 >= 0) this.instr.sendDone(p.topic, mq, messagesIn(p.batch, p.uniqMsgId), this.clock.now() - t0, e);
        failures.push({ brokerName: mq.brokerName, queueId: mq.queueId, error: e });
        lastBrokerName = mq.brokerName;
        const retriable =
          (e instanceof RemotingError || e instanceof BrokerError || e instanceof NoRouteError) && e.retriable;
        log('send to %s/%d failed (%s): %s', mq.brokerName, mq.queueId, retriable ? 'retriable' : 'final', e.message);
        if (!retriable) {
          this.counters.failed++;
          throw e;
        }
        if (attempt + 1 < times) this.counters.retries++;
      }
    }
    this.counters.failed++;
    throw new SendFailedError(p.topic, failures, this.clock.now() - begin, timedOut);
  }

  private async sendKernel(
    p: Prepared,
    mq: MessageQueue,
    timeoutMs: number,
    oneway: boolean,
  ): Promise<SendResult | void> {
    const instance = this.clientInstance;
    // A static topic's logic queue goes to the broker leading it (static-topic.ts).
    let brokerName = brokerNameOf(instance, mq);
    let addr = instance.findBrokerMasterAddress(brokerName);
    if (!addr) {
      await instance.getTopicRoute(p.topic, { refresh: true }).catch(() => undefined);
      brokerName = brokerNameOf(instance, mq);
      addr = instance.findBrokerMasterAddress(brokerName);
      if (!addr) throw new NoRouteError(p.topic, `broker ${brokerName} has no master address`);
    }
    const fields = sendHeader(this.options, p, mq.queueId, brokerName, this.clock.now());
    if (oneway) {
      await instance.invokeOneway(addr, p.op, fields, p.body);
      return;
    }
    const begin = this.trace ? this.clock.now() : 0;
    let reply: CallReply<Prepared['op']>;
    try {
      reply = await instance.call(addr, p.op, fields, p.body, { timeoutMs });
    } catch (err) {
      await refreshOnNotLeader(instance, p.topic, err);
      throw err;
    }
    const result = toSendResult(reply, p, mq);
    this.trace?.onSend({
      ...result,
      topic: p.topic,
      properties: p.properties,
      brokerAddr: addr,
      bodyLength: p.body.length,
      beginMs: begin,
    });
    return result;
  }
}
