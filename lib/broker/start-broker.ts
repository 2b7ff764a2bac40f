import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureDir } from './atomic-file.js';
import { Broker, DEFAULT_IDLE_TIMEOUT_MS, type BrokerTuning } from './broker.js';
import { systemClock, type Clock } from '../clock.js';
import { BrokerOptionError } from './errors.js';
import { brokerOptionCheck } from './option-check.js';
import { checkRetention } from './store-retention.js';
import { NameServer } from './name-server.js';
import { createReplyRequestTable } from './reply/reply-message-processor.js';
import { stderrWarn } from './atomic-file.js';
import { resolveLogger, type LoggerOption } from '../logger.js';
import { PlainAclChecker, aclRequestGate, loadAclOption, type AclConfig } from './acl/index.js';
import { setUpBrokerAuth, type BrokerAuth, type BrokerAuthOptions } from './acl/auth-setup.js';
import { AuthProcessor } from './processor/auth-processor.js';

/**
 * Options of startBroker: where it listens and stores, and the brokers' tuning (Java's broker.conf names).
 * @category Testing with the embedded broker
 */
export interface StartBrokerOptions extends BrokerTuning {
  /**
   * Address to listen on and to advertise (STOREHOST, routes).
   * @default "127.0.0.1"
   */
  host?: string;
  /**
   * Name-server port; 0 picks a free one.
   * @default 0
   */
  namesrvPort?: number;
  /**
   * Port of the first broker; the others take the following ports, or free ones when 0.
   * @default 0
   */
  brokerPort?: number;
  /**
   * Number of brokers (broker-a, broker-b, ...), 1..64.
   * @default 1
   */
  brokers?: number;
  /**
   * Store root. With several brokers each gets DIR/<brokerName>.
   * @default a temporary folder, removed at close
   */
  dataDir?: string;
  /**
   * Time source of the brokers' scheduled work (delays, timers, transaction checks, expiries): a
   * ManualClock makes a test advance it.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Where the broker's warnings go (damage found in its store at start-up, a periodic task that
   * failed): any object with debug/info/warn/error (console, pino), or false for nothing. `warn`,
   * when given, takes precedence for the store's lines.
   * @default warn lines to stderr, prefixed "rocketwire broker:"
   */
  logger?: LoggerOption;
  /**
   * Access control, Apache's ACL 1.0 plain access (lib/broker/acl): the name of a plain_acl.yml
   * (the YAML subset described in docs/embedded-broker.md, or JSON of the same shape) or the
   * configuration itself. With it every request needs a valid AccessKey + Signature (Java's
   * AclClientRPCHook, rocketwire's `acl` client option) or a white-listed address, and the
   * account's permissions; refusals are SYSTEM_ERROR "org.apache.rocketmq.acl.common.AclException: …",
   * as from Apache 4.9. A file that does not load stops startBroker (AclConfigError).
   * @default undefined (no access control: anyone who reaches the port is served)
   */
  acl?: string | AclConfig;
  /**
   * 5.x auth (ACL 2.0, Apache 5.3's authenticationEnabled / authorizationEnabled /
   * initAuthenticationUser): users and ACLs managed with AUTH_* 3001–3010 and stored per broker;
   * refusals are NO_PERMISSION with Apache's remark. Not with `acl` (BrokerOptionError).
   * @default undefined (AUTH_* requests are served; nothing is checked)
   */
  auth?: BrokerAuthOptions;
}

/**
 * A running embedded name server and its brokers, as startBroker returns them.
 * @category Testing with the embedded broker
 */
export interface EmbeddedBroker {
  /** "host:port" of the name server. */
  namesrv: string;
  /** Addresses of every broker, in name order. */
  brokers: string[];
  /** The first broker's address. */
  broker: string;
  /** The store root (a temporary folder when dataDir was not given). */
  dataDir: string;
  /** The broker objects (stores, consumer groups) for tests and tools. */
  instances: Broker[];
  /** The name server object, for tests and tools. */
  nameServer: NameServer;
  /** Stops the brokers and the name server (and removes the temporary store folder). */
  close(): Promise<void>;
}

/** Broker names as Apache's examples spell them: broker-a, broker-b, ... */
export function brokerName(i: number): string {
  let s = '';
  let n = i;
  do {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return `broker-${s}`;
}

/**
 * Start a name server and N brokers in this process.
 * @category Testing with the embedded broker
 */
export async function startBroker(options: StartBrokerOptions = {}): Promise<EmbeddedBroker> {
  const host = options.host ?? '127.0.0.1';
  const count = brokerOptionCheck.intIn('brokers', options.brokers ?? 1, 1, 64);
  const queues = brokerOptionCheck.intIn('queues', options.queues ?? 8, 1, 1024);
  checkRetention(options);
  const clock = options.clock ?? systemClock;
  const logger =
    options.logger === undefined ? null : resolveLogger(options.logger, (m) => new BrokerOptionError('logger', m));
  const warn = options.warn ?? (logger ? (line: string) => logger.warn(`broker: ${line}`) : stderrWarn);
  const acl = options.acl === undefined ? null : loadAclOption(options.acl);
  if (acl && (options.auth?.authenticationEnabled || options.auth?.authorizationEnabled))
    throw new BrokerOptionError('auth', 'cannot be enabled with acl: choose ACL 1.0 (acl) or 5.x auth (auth)');
  const idleTimeoutMs = brokerOptionCheck.numberAtLeast(
    'idleTimeoutMs',
    options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    0,
  );
  // one table for all brokers of the cluster: a reply may go to another broker than its request
  const replyRequests = createReplyRequestTable(options, clock);
  // made once every option is checked: a bad option must not leave a temporary folder behind
  const tempDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-broker-'));
  const dropTempDir = (): void => {
    if (tempDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const storeDirOf = (i: number): string => (count === 1 ? dataDir : path.join(dataDir, brokerName(i)));
  let nameServer: NameServer;
  let auths: BrokerAuth[];
  try {
    ensureDir(dataDir);
    auths = [];
    for (let i = 0; i < count; i++) auths.push(setUpBrokerAuth(storeDirOf(i), options.auth, 'DefaultCluster', warn));
    // the name server checks admin codes against the first broker's users (Apache's checks nothing)
    const namesrvAuth = auths[0]!.checker('namesrv');
    nameServer = new NameServer({
      serializeType: options.serializeType ?? 'JSON',
      clock,
      idleTimeoutMs,
      maxBufferedBytes: options.maxBufferedBytes,
      maxOutputBytesPerConnection: options.maxOutputBytesPerConnection,
      maxQueueNums: options.maxQueueNums,
      requestGate: acl
        ? aclRequestGate(new PlainAclChecker(acl, 'namesrv'), { server: 'name server', warn })
        : namesrvAuth && aclRequestGate(namesrvAuth, { server: 'name server', warn }),
    });
  } catch (err) {
    dropTempDir();
    throw err;
  }
  const brokers: Broker[] = [];
  try {
    const namesrv = await nameServer.listen(options.namesrvPort ?? 0, host);
    for (let i = 0; i < count; i++) {
      const name = brokerName(i);
      const b = new Broker({
        brokerName: name,
        host,
        port: options.brokerPort ? options.brokerPort + i : 0,
        storeDir: storeDirOf(i),
        namesrv: nameServer,
        clock,
        queues,
        autoCreateTopic: options.autoCreateTopic,
        serializeType: options.serializeType,
        segmentSize: options.segmentSize,
        cachedSegments: options.cachedSegments,
        maxMessageSize: options.maxMessageSize,
        fileReservedTime: options.fileReservedTime,
        deleteWhen: options.deleteWhen,
        diskMaxUsedSpaceRatio: options.diskMaxUsedSpaceRatio,
        cleanResourceInterval: options.cleanResourceInterval,
        messageDelayLevel: options.messageDelayLevel,
        channelExpiredTimeoutMs: options.channelExpiredTimeoutMs,
        flushConsumerOffsetIntervalMs: options.flushConsumerOffsetIntervalMs,
        lockMaxLiveTimeMs: options.lockMaxLiveTimeMs,
        warn,
        maxQueueNums: options.maxQueueNums,
        maxTagsPerSubscription: options.maxTagsPerSubscription,
        sqlMaxLength: options.sqlMaxLength,
        sqlMaxNodes: options.sqlMaxNodes,
        sqlEvaluationBudget: options.sqlEvaluationBudget,
        enablePropertyFilter: options.enablePropertyFilter,
        idleTimeoutMs,
        maxBufferedBytes: options.maxBufferedBytes,
        maxOutputBytesPerConnection: options.maxOutputBytesPerConnection,
        transactionCheckInterval: options.transactionCheckInterval,
        transactionTimeOut: options.transactionTimeOut,
        transactionCheckMax: options.transactionCheckMax,
        rejectTransactionMessage: options.rejectTransactionMessage,
        maxEndedHalves: options.maxEndedHalves,
        storeReplyMessageEnable: options.storeReplyMessageEnable,
        replyRequests,
        minPopInvisibleTimeMs: options.minPopInvisibleTimeMs,
        maxPopInvisibleTimeMs: options.maxPopInvisibleTimeMs,
        traceTopicEnable: options.traceTopicEnable,
        msgTraceTopicName: options.msgTraceTopicName,
        timerWheelEnable: options.timerWheelEnable,
        timerPrecisionMs: options.timerPrecisionMs,
        timerMaxDelaySec: options.timerMaxDelaySec,
        permissionChecker: acl ? new PlainAclChecker(acl) : auths[i]!.checker('broker'),
        timerMaxInMemory: options.timerMaxInMemory,
        timerDeliverPerTick: options.timerDeliverPerTick,
        recallMessageEnable: options.recallMessageEnable,
      });
      new AuthProcessor(auths[i]!.store).register(b.server);
      brokers.push(b);
      await b.start();
    }
    let closing: Promise<void> | null = null;
    return {
      namesrv,
      brokers: brokers.map((b) => b.address),
      broker: brokers[0]!.address,
      dataDir,
      instances: brokers,
      nameServer,
      close() {
        closing ??= (async () => {
          for (const b of brokers) await b.close();
          await nameServer.close();
          dropTempDir();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const b of brokers) await b.close().catch(() => undefined);
    await nameServer.close().catch(() => undefined);
    dropTempDir();
    throw err;
  }
}
