import os from 'node:os';
import type { ConnectionOptions, TlsOptions } from 'node:tls';
import type { SerializeTypeName } from '../../protocol/internal.js';
import type { AclCredentials } from '../remoting/index.js';
import { systemClock, type Clock } from '../clock.js';
import { resolveNamespace } from './namespace.js';
import { resolveLogger, type Logger, type LoggerOption } from '../logger.js';
import { aliasOption, optionValidator } from '../validate.js';
import { ClientOptionError } from './errors.js';

/**
 * Options of a client instance. All consumers and producers of one process that end up with the same
 * clientId share one instance, so these describe the connection side only.
 * @category Shared by every client
 */
export interface ClientOptions {
  /**
   * Name server addresses, "host:port;host:port".
   * @default the NAMESRV_ADDR environment variable, as Java's ClientConfig reads it
   */
  namesrvAddr?: string;
  /**
   * Where warnings and errors go: any object with debug/info/warn/error (console, pino), or false
   * for nothing. Logged at warn: a name server or broker that stops answering (once per episode),
   * a handler result that is not a status, a failed send-back or offset commit, flow-control parks
   * held past a minute; at info: their recoveries. `DEBUG=rocketwire:*` still traces everything.
   * @default warn and error lines to stderr through console
   */
  logger?: LoggerOption;
  /**
   * Java's behaviour: start() resolves even when no name server answers (failures are then only
   * logged and emitted). When false, start() of a producer or consumer rejects with
   * NameServerUnavailableError if no name server answers within connectTimeoutMs.
   * @default false
   */
  startWithoutNameServer?: boolean;
  /**
   * Instance name, the part after "@" in the clientId. "DEFAULT" is left as is here; producers and
   * clustering consumers call `resolveInstanceName` first, as the Java client does (docs/protocol-facts.md#client-id).
   * @default "DEFAULT" (producers and clustering consumers then use "<pid>#<nanotime>")
   */
  instanceName?: string;
  /**
   * The IP written into the clientId; only an identifier.
   * @default the first non-internal IPv4 address outside 192.168.x.x, else the last IPv4 address found, else 127.0.0.1
   */
  clientIp?: string;
  /**
   * Header serialization of the requests we send: JSON or ROCKETMQ (the binary form).
   * @default "JSON"
   */
  serializeType?: SerializeTypeName;
  /**
   * ACL credentials (access key, secret key, optional security token): every request is signed
   * with them, as Java's AclClientRPCHook does.
   * @default undefined (requests are not signed)
   */
  acl?: AclCredentials;
  /**
   * TLS to every peer: true for system CAs, or tls.connect options (ca, servername, rejectUnauthorized, …).
   * @default undefined (plain TCP)
   */
  tls?: ConnectionOptions | TlsOptions | boolean;
  /**
   * Language name sent in every request: JAVA or OTHER are known to every broker version.
   * @default "JAVA"
   */
  language?: string;
  /**
   * Version sent in every request; 409 (V4_9_8) gets standard JSON routes and no GO_AWAY.
   * @default 409
   */
  version?: number;
  /**
   * Interval between heartbeats to every broker, in milliseconds.
   * @default 30000
   */
  heartbeatIntervalMs?: number;
  /**
   * Heartbeat V2 (RocketMQ 5.x, Java's `useHeartbeatV2`): after a broker has taken the full
   * heartbeat and said it supports V2, send it heartbeats without the subscriptions while they
   * are unchanged (the heartbeat's fingerprint stays the same). A changed subscription, a
   * rebalance, a new connection or the broker's IS_SUB_CHANGE send the full data again. Brokers
   * before 5.0 answer without the V2 flag and keep getting the full data. Every client sharing
   * an instance must agree on it.
   * @default false (Java: the `com.rocketmq.heartbeat.v2` system property, false when unset)
   */
  useHeartbeatV2?: boolean;
  /**
   * Interval between route refreshes from the name server, in milliseconds.
   * @default 30000
   */
  pollNameServerIntervalMs?: number;
  /**
   * Interval between persists of the consumers' offsets (to the broker, or to the offset file of a
   * broadcasting consumer), in milliseconds.
   * @default 5000
   */
  persistOffsetIntervalMs?: number;
  /**
   * Timeout of the client's own RPCs (routes, offsets, heartbeats), in milliseconds.
   * @default 3000
   */
  mqClientApiTimeoutMs?: number;
  /**
   * Connect timeout handed to the remoting client, in milliseconds; also how long start() waits for
   * a name server to answer.
   * @default 3000
   */
  connectTimeoutMs?: number;
  /**
   * Time source of the instance's scheduled tasks (route refresh, heartbeat, offset persist), of its
   * call timeouts and of the producer's timestamps. Clients sharing a
   * clientId share one instance and so must share its clock (another one is a ClientOptionError).
   * @default systemClock
   */
  clock?: Clock;
  /**
   * 5.x's namespaceV2 (ClientConfig#setNamespaceV2): names are NOT wrapped; every request carries
   * extFields `nsd`="true" and `ns`=this (NamespaceRpcHook), for a proxy or broker that reads them.
   * Part of the shared client instance, like the clock. See namespace.ts for `namespace` (v1).
   * @default undefined (no namespace)
   */
  namespaceV2?: string;
  /**
   * Most queues a topic's route may describe: each QueueData's readQueueNums and writeQueueNums,
   * and the larger of the two summed over the route (orderTopicConf's counts likewise). A route
   * past it is refused with RouteLimitError naming the name server and the field, and the last good
   * route stays in use. Real layouts stay far below (a topic with 1 024 queues on each of 64 broker
   * groups holds 65 536).
   * @default 131072
   */
  maxRouteQueues?: number;
  /**
   * Most BrokerDatas and QueueDatas a route may list, and addresses one BrokerData may hold;
   * past it, RouteLimitError.
   * @default 4096
   */
  maxRouteBrokers?: number;
  /**
   * A connection whose peer sends this many responses to requests never made on it (opaques it
   * never sent; late answers to timed-out calls do not count) is closed with
   * RemotingUnmatchedResponsesError, logged at warn; the next call opens a new one. 0 = never.
   * Part of the shared client instance, like the clock.
   * @default 1000
   */
  maxUnmatchedResponses?: number;
  /**
   * Refresh a topic's route from the name server as soon as a broker its route names refuses a
   * connection or drops one under a call, instead of at the next `pollNameServerIntervalMs`: a
   * promoted slave (controller mode), a master gone from a master–slave group or a restarted
   * broker is used within a second or two. Bounded by `fastRouteRefreshIntervalMs` per topic and
   * `fastRouteRefreshMaxPerSecond` in all. Java's client has no such path: false behaves as it does.
   * @default true
   */
  fastRouteRefresh?: boolean;
  /**
   * Least time between two fast route refreshes of one topic, in milliseconds (100..600000).
   * @default 1000
   */
  fastRouteRefreshIntervalMs?: number;
  /**
   * Most fast route refreshes of all topics together in a second (1..1000), so a dead name server
   * or a broker that stays down is not hammered.
   * @default 10
   */
  fastRouteRefreshMaxPerSecond?: number;
  /**
   * The address server that tells the name server list when no `namesrvAddr` (nor NAMESRV_ADDR) is
   * given, as Java's `rocketmq.namesrv.domain` system property: the list is fetched from
   * `http://{namesrvDomain}:8080/rocketmq/{namesrvDomainSubgroup}` (no `:8080` when the domain
   * carries a port) at start and every 2 minutes. Java defaults it to jmenv.tbsite.net; rocketwire
   * uses an address server only when one is named here or in ROCKETMQ_NAMESRV_DOMAIN.
   * @default the ROCKETMQ_NAMESRV_DOMAIN environment variable
   */
  namesrvDomain?: string;
  /**
   * The last part of the address server's URL, as Java's `rocketmq.namesrv.domain.subgroup`.
   * @default the ROCKETMQ_NAMESRV_DOMAIN_SUBGROUP environment variable, else "nsaddr"
   */
  namesrvDomainSubgroup?: string;
}

/** Default of ClientOptions.maxRouteQueues: twice 65 536, the layout the client must take. */
export const DEFAULT_MAX_ROUTE_QUEUES = 131_072;
/** Default of ClientOptions.maxRouteBrokers. */
export const DEFAULT_MAX_ROUTE_BROKERS = 4096;

/** ClientOptions with every default filled in. */
export interface ResolvedClientOptions
  extends Required<
    Omit<ClientOptions, 'acl' | 'tls' | 'logger' | 'namesrvAddr' | 'namesrvDomain' | 'namesrvDomainSubgroup'>
  > {
  /** '' when the list comes from the address server (`addressServerUrl`). */
  namesrvAddr: string;
  /** The address server's URL when no namesrvAddr is given and a namesrvDomain is; '' otherwise. */
  addressServerUrl: string;
  logger: Logger;
  acl: AclCredentials | undefined;
  tls: ConnectionOptions | TlsOptions | boolean | undefined;
  namesrvAddrs: string[];
}

/** The client's option checks (ClientOptionError "option <name>: must be an integer between …"). */
const clientOptionCheck = optionValidator(ClientOptionError, { range: 'between' });

function positiveInt(name: string, value: number | undefined, def: number, min = 1, max = 24 * 3600_000): number {
  return clientOptionCheck.intIn(name, value ?? def, min, max);
}

/** Splits "h:p;h:p" (also accepts "," and whitespace) and checks each entry has a port. */
export function parseNamesrvAddr(addr: string): string[] {
  const list = addr
    .split(/[;,\s]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length === 0) throw new ClientOptionError('namesrvAddr', 'no name server address given');
  for (const a of list) {
    const m = /^(.+):(\d{1,5})$/.exec(a);
    if (!m || Number(m[2]) > 65535) throw new ClientOptionError('namesrvAddr', `"${a}" is not host:port`);
  }
  return list;
}

/**
 * The clientIP of docs/protocol-facts.md#client-id: first non-internal IPv4 that is not 192.168.x.x,
 * else the last IPv4 found,
 * else 127.0.0.1. It only needs to be unique inside a consumer group.
 */
export function defaultClientIp(): string {
  const v4: string[] = [];
  for (const list of Object.values(os.networkInterfaces())) {
    for (const ni of list ?? []) {
      if (ni.family === 'IPv4' && !ni.internal) v4.push(ni.address);
    }
  }
  const preferred = v4.find((a) => !a.startsWith('127.') && !a.startsWith('192.168.'));
  return preferred ?? v4[v4.length - 1] ?? '127.0.0.1';
}

/**
 * Replaces the instance name "DEFAULT" by "<pid>#<nanotime>" as Java's changeInstanceNameToPID does,
 * so that two producers/consumers started in one process get distinct client ids.
 */
export function resolveInstanceName(name: string | undefined): string {
  if (name === undefined || name === 'DEFAULT') return `${process.pid}#${process.hrtime.bigint()}`;
  return name;
}

/**
 * The `namesrvAddr` option, or the NAMESRV_ADDR environment variable when it is not given (Java's
 * ClientConfig reads the same variable); '' when neither is there but an address server is
 * (`namesrvDomain` or ROCKETMQ_NAMESRV_DOMAIN); a ClientOptionError when none of them is.
 */
export function namesrvAddrOption(
  value: string | undefined,
  option = 'namesrvAddr',
  addressServer?: { namesrvDomain?: string | undefined },
): string {
  if (value === undefined) {
    const env = process.env.NAMESRV_ADDR;
    if (env !== undefined && env.trim() !== '') return env;
    if (addressServer && namesrvDomainOption(addressServer.namesrvDomain) !== undefined) return '';
    throw new ClientOptionError(
      option,
      'is required (or set the NAMESRV_ADDR environment variable, or name an address server with namesrvDomain)',
    );
  }
  if (typeof value !== 'string') throw new ClientOptionError(option, 'must be a string "host:port;host:port"');
  return value;
}

/**
 * The group of a client's options: `group`, or its alias `consumerGroup` / `producerGroup` (Java's
 * names). Both given and different is an error naming the alias; undefined when neither is given.
 */
export function groupOption(
  options: { group?: unknown } & Record<string, unknown>,
  alias: string,
  error: (option: string, message: string) => Error,
): string | undefined {
  const v = aliasOption(
    options,
    'group',
    alias,
    error,
    (group, other) => `is an alias of group and differs from it (${String(other)} vs ${String(group)}): give one`,
  );
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw error(options.group !== undefined ? 'group' : alias, 'must be a string');
  return v;
}

/**
 * A duration option under its `…Ms` name or its deprecated Java name; both given and different is
 * an error naming the Java one.
 */
export function durationOption<T>(
  options: Record<string, unknown>,
  name: string,
  javaName: string,
  error: (option: string, message: string) => Error,
): T | undefined {
  return aliasOption(
    options,
    name,
    javaName,
    error,
    (v, old) => `is the deprecated name of ${name} and differs from it (${String(old)} vs ${String(v)}): give ${name}`,
  ) as T | undefined;
}

/** The ClientOptions a client passes on to its client instance, copied from its own options. */
export function clientInstanceOptions(options: ClientOptions): Omit<ClientOptions, 'namesrvAddr' | 'instanceName'> {
  const out: Record<string, unknown> = {};
  for (const k of CLIENT_OPTION_KEYS) if (options[k] !== undefined) out[k] = options[k];
  return out as Omit<ClientOptions, 'namesrvAddr' | 'instanceName'>;
}

const CLIENT_OPTION_KEYS = [
  'clientIp',
  'serializeType',
  'acl',
  'tls',
  'language',
  'version',
  'heartbeatIntervalMs',
  'useHeartbeatV2',
  'pollNameServerIntervalMs',
  'persistOffsetIntervalMs',
  'mqClientApiTimeoutMs',
  'connectTimeoutMs',
  'clock',
  'namespaceV2',
  'logger',
  'maxRouteQueues',
  'maxRouteBrokers',
  'maxUnmatchedResponses',
  'fastRouteRefresh',
  'fastRouteRefreshIntervalMs',
  'fastRouteRefreshMaxPerSecond',
  'namesrvDomain',
  'namesrvDomainSubgroup',
] as const satisfies readonly (keyof ClientOptions)[];

/** Fills the defaults into fresh object and validates the ranges. */
export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  const namesrvAddr = namesrvAddrOption(options.namesrvAddr, 'namesrvAddr', options);
  // '' from namesrvAddrOption only when nothing names a name server and an address server is named
  const fromAddressServer = namesrvAddr === '' && options.namesrvAddr === undefined;
  const namesrvAddrs = fromAddressServer ? [] : parseNamesrvAddr(namesrvAddr);
  const addressServerUrl = fromAddressServer
    ? addressServerUrlOf(options.namesrvDomain, options.namesrvDomainSubgroup)
    : '';
  const language = options.language ?? 'JAVA';
  const serializeType = options.serializeType ?? 'JSON';
  clientOptionCheck.oneOf('serializeType', serializeType, ['JSON', 'ROCKETMQ']);
  const instanceName = options.instanceName ?? 'DEFAULT';
  if (instanceName.length === 0 || instanceName.includes('@')) {
    throw new ClientOptionError('instanceName', 'must be non-empty and contain no "@"');
  }
  if (options.fastRouteRefresh !== undefined && typeof options.fastRouteRefresh !== 'boolean')
    throw new ClientOptionError('fastRouteRefresh', 'must be true or false');
  if (options.useHeartbeatV2 !== undefined && typeof options.useHeartbeatV2 !== 'boolean')
    throw new ClientOptionError('useHeartbeatV2', 'must be true or false');
  return {
    namesrvAddr,
    namesrvAddrs,
    addressServerUrl,
    fastRouteRefresh: options.fastRouteRefresh ?? true,
    fastRouteRefreshIntervalMs: positiveInt(
      'fastRouteRefreshIntervalMs',
      options.fastRouteRefreshIntervalMs,
      1000,
      100,
      600_000,
    ),
    fastRouteRefreshMaxPerSecond: positiveInt(
      'fastRouteRefreshMaxPerSecond',
      options.fastRouteRefreshMaxPerSecond,
      10,
      1,
      1000,
    ),
    logger: resolveLogger(options.logger, (m) => new ClientOptionError('logger', m)),
    startWithoutNameServer: options.startWithoutNameServer ?? false,
    instanceName,
    clientIp: options.clientIp ?? defaultClientIp(),
    serializeType,
    acl: options.acl,
    tls: options.tls,
    language,
    version: positiveInt('version', options.version, 409, 0, 65535),
    heartbeatIntervalMs: positiveInt('heartbeatIntervalMs', options.heartbeatIntervalMs, 30_000),
    useHeartbeatV2: options.useHeartbeatV2 ?? false,
    pollNameServerIntervalMs: positiveInt('pollNameServerIntervalMs', options.pollNameServerIntervalMs, 30_000),
    persistOffsetIntervalMs: positiveInt('persistOffsetIntervalMs', options.persistOffsetIntervalMs, 5_000),
    mqClientApiTimeoutMs: positiveInt('mqClientApiTimeoutMs', options.mqClientApiTimeoutMs, 3_000),
    connectTimeoutMs: positiveInt('connectTimeoutMs', options.connectTimeoutMs, 3_000),
    clock: options.clock ?? systemClock,
    namespaceV2: resolveNamespace(options.namespaceV2, 'namespaceV2') ?? '',
    maxRouteQueues: positiveInt('maxRouteQueues', options.maxRouteQueues, DEFAULT_MAX_ROUTE_QUEUES, 1024, 2 ** 30),
    maxRouteBrokers: positiveInt('maxRouteBrokers', options.maxRouteBrokers, DEFAULT_MAX_ROUTE_BROKERS, 16, 2 ** 30),
    maxUnmatchedResponses: positiveInt('maxUnmatchedResponses', options.maxUnmatchedResponses, 1000, 0, 2 ** 30),
  };
}

/** The namesrvDomain option, else ROCKETMQ_NAMESRV_DOMAIN; undefined when neither names one. */
export function namesrvDomainOption(value: string | undefined): string | undefined {
  const domain = value ?? process.env.ROCKETMQ_NAMESRV_DOMAIN;
  if (domain === undefined || domain.trim() === '') {
    if (value !== undefined) throw new ClientOptionError('namesrvDomain', 'must be a non-empty host or host:port');
    return undefined;
  }
  return domain.trim();
}

/**
 * The address server's URL (Java's MixAll.getWSAddr): `http://{domain}:8080/rocketmq/{subgroup}`,
 * without `:8080` when the domain carries its own port.
 */
export function addressServerUrlOf(domainOption: string | undefined, subgroupOption: string | undefined): string {
  const domain = namesrvDomainOption(domainOption);
  if (domain === undefined) throw new ClientOptionError('namesrvDomain', 'is required for an address server');
  const subgroup = (subgroupOption ?? process.env.ROCKETMQ_NAMESRV_DOMAIN_SUBGROUP ?? 'nsaddr').trim();
  if (!/^[\w.-]+$/.test(subgroup))
    throw new ClientOptionError(
      'namesrvDomainSubgroup',
      `"${subgroup}" is not a path segment of letters, digits, ".", "-", "_"`,
    );
  if (/[\s/?#@]/.test(domain)) throw new ClientOptionError('namesrvDomain', `"${domain}" is not a host or host:port`);
  // Java tests indexOf(":") > 0: a domain with a colon past its first character names its port
  const hostPort = domain.indexOf(':') > 0 ? domain : `${domain}:8080`;
  return `http://${hostPort}/rocketmq/${subgroup}`;
}

/** clientId = clientIp@instanceName (docs/protocol-facts.md#client-id). */
export function buildClientId(o: Pick<ResolvedClientOptions, 'clientIp' | 'instanceName'>): string {
  return `${o.clientIp}@${o.instanceName}`;
}
