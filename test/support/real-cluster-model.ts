/**
 * The shapes of a real cluster the harness runs: its options, the handle a test gets
 * (`RealCluster`), and what the harness's modules share while they boot and drive it (the broker
 * slots and the `ClusterContext`).
 */
import type { AclCredentials, RawConnection, TopicRoute } from './raw-remoting.js';
import type { RemotingCommand } from '../../protocol/index.js';
import type { Jvm } from './jvm.js';

export const CLUSTER_NAME = 'DefaultCluster';

export interface RealClusterOptions {
  /** '5.3.3' (default), '5.5.0' or '4.9.7'; any version fetch-jars.sh can fetch. */
  version?: string;
  brokers?: 1 | 2;
  /**
   * Give every broker group a slave: brokerId 1, brokerRole SLAVE, replicating from its master
   * (brokerId 0, ASYNC_MASTER) over loopback HA; both run with slaveReadEnable=true.
   */
  slaves?: boolean;
  /**
   * Start a 5.x rocketmq-proxy in cluster mode in front of the brokers (after them): `cluster.proxy`
   * is its remoting endpoint, which clients use as their name server. Extra keys go to rmq-proxy.json.
   */
  proxy?: boolean | Record<string, string | number | boolean>;
  /**
   * Loopback address the brokers bind (default 127.0.0.1) while they still advertise
   * 127.0.0.1:port: with '127.0.0.2', a Toxiproxy listening on 127.0.0.1:port can stand between
   * the clients and each broker (see toxiproxy.ts). `brokerBinds` lists the direct addresses.
   */
  brokerBindHost?: string;
  /** Header encoding the brokers use for their own requests and (5.x) all their responses. */
  serializeType?: 'JSON' | 'ROCKETMQ';
  /** Turn authentication on (5.x: auth 2.0 with this user as super user; 4.9: plain ACL, admin account). */
  acl?: AclCredentials;
  /**
   * 5.x controller mode (automatic master switch): the name server runs the embedded DLedger
   * controller (enableControllerInNamesrv) and every broker of a group starts with
   * enableControllerMode=true, brokerId -1, allAckInSyncStateSet=true and controllerAddr = the
   * controller's DLedger port; the controller picks the master (registered as brokerId 0) and
   * gives each broker a persistent id. Use with `brokers: 1, slaves: true`; the first slot boots
   * first and so is elected master.
   */
  controller?: boolean;
  /** Maximum broker heap; default 512 MiB (grows from 128 MiB, so light tests stay small). */
  brokerHeapMb?: number;
  /** Extra broker JVM flags, after the harness's own (e.g. a bigger heap for benchmarks). */
  brokerJvmArgs?: string[];
  /** Extra broker.conf keys, applied after the harness's own. */
  brokerConfig?: Record<string, string | number | boolean>;
  /** Per-JVM boot limits; defaults 30 s (name server) and 60 s (broker, including the route check). */
  namesrvBootTimeoutMs?: number;
  brokerBootTimeoutMs?: number;
}

export interface RealCluster {
  readonly version: string;
  /** "127.0.0.1:port" of the name server. */
  readonly namesrv: string;
  /** "127.0.0.1:port" of each broker master, index = broker number. */
  readonly brokers: string[];
  /** "127.0.0.1:port" of each group's slave (brokerId 1), index = broker number; empty without `slaves`. */
  readonly slaves: string[];
  /** Where each master really listens: `brokers` unless `brokerBindHost` moved them. */
  readonly brokerBinds: string[];
  /** "127.0.0.1:port" of the proxy's remoting endpoint ('' without the `proxy` option). */
  readonly proxy: string;
  /** 'broker-a', 'broker-b'. */
  readonly brokerNames: string[];
  readonly clusterName: string;
  /** The run folder (removed by stop()). */
  readonly dir: string;
  /** Per process: a folder holding stdout.log and RocketMQ's own logs (logs/...). */
  readonly logs: { namesrv: string; brokers: string[]; slaves: string[] };
  /** Wall time of each boot, in ms (name server; each broker's latest start, including the route check). */
  readonly bootMs: { namesrv: number; brokers: number[]; slaves: number[] };
  readonly acl: AclCredentials | undefined;
  /**
   * Stop everything and remove the run folder (kept, with its logs, when ROCKETWIRE_KEEP_INTEROP=1).
   * graceful (default true): SIGTERM, then SIGKILL after 20 s; false: SIGKILL at once.
   */
  stop(options?: { graceful?: boolean }): Promise<void>;
  /**
   * SIGTERM broker i's master (its slave with `slave`): it unregisters from the name server; SIGKILL
   * if still alive after 20 s. With `kill`, SIGKILL at once: the process dies with its in-memory
   * state (unflushed offsets), the name server drops it when the connection closes.
   */
  stopBroker(i: number, options?: { slave?: boolean; kill?: boolean }): Promise<void>;
  /** Same as stopBroker(i, { ...options, kill: true }). */
  killBroker(i: number, options?: { slave?: boolean }): Promise<void>;
  /** Start broker i's master (slave) again on the same ports and store; resolves when the name server lists it. */
  startBroker(i: number, options?: { slave?: boolean }): Promise<void>;
  /** Whether broker i's master (slave) process is running. */
  isRunning(i: number, options?: { slave?: boolean }): boolean;
  /**
   * Poll GET_MAX_OFFSET on broker i's master and slave until the slave holds every message of
   * `topic`'s queues (HA replication caught up); resolves with the per-queue max offsets.
   */
  waitForReplica(i: number, topic: string, options?: { queues?: number; timeoutMs?: number }): Promise<number[]>;
  /**
   * Poll the name server until the route of `topic` lists exactly `ids` (0 = master, 1 = slave)
   * for broker group i (an empty `ids`: the group is gone from the route).
   */
  waitForBrokerIds(topic: string, i: number, ids: number[], options?: { timeoutMs?: number }): Promise<TopicRoute>;
  /**
   * UPDATE_AND_CREATE_TOPIC on each broker (all by default) and its slave, then wait until the route
   * lists them. `attributes` (5.x): topic attributes, e.g. { 'message.type': 'NORMAL' } for the proxy.
   */
  createTopic(
    topic: string,
    options?: { queues?: number; brokers?: number[]; perm?: number; attributes?: Record<string, string> },
  ): Promise<TopicRoute>;
  /**
   * Poll GET_ROUTEINFO_BY_TOPIC until the route lists the `brokers` broker names (default: all
   * running); with `exact`, until it lists those and no other.
   */
  waitForRoute(
    topic: string,
    options?: { brokers?: string[]; exact?: boolean; timeoutMs?: number },
  ): Promise<TopicRoute>;
  /** A raw connection (signed with the cluster's ACL credentials unless acl: null); close() it. */
  connect(addr: string, options?: { acl?: AclCredentials | null }): RawConnection;
  /** One request on a fresh raw connection (signed with the cluster's ACL credentials unless acl: null). */
  invoke(
    addr: string,
    request: RemotingCommand,
    options?: { timeoutMs?: number; acl?: AclCredentials | null },
  ): Promise<RemotingCommand>;
  /** The last lines of every process's stdout, for failure messages. */
  tail(lines?: number): string;
  /** The embedded controller's DLedger address ('' without the `controller` option). */
  readonly controllerAddr: string;
}

/** One broker JVM of the cluster, master or slave, with the ports and folders it keeps across restarts. */
export interface BrokerSlot {
  name: string;
  /** 0 = master, 1 = slave. */
  id: number;
  /** The master of a slave. */
  master?: BrokerSlot;
  port: number;
  home: string;
  conf: string;
  jvm: Jvm | null;
}

/** What the boot and poll functions of the harness share about one cluster. */
export interface ClusterContext {
  readonly options: RealClusterOptions;
  readonly v4: boolean;
  /** The jars folder (rmq-<version>/lib). */
  readonly lib: string;
  /** rocketmq.home.dir of every JVM. */
  readonly home: string;
  /** The name server's address, known once it has booted. */
  namesrv: string;
  /** Loopback address the brokers bind. */
  readonly bindHost: string;
  readonly brokerJvmArgs: string[];
  readonly brokers: BrokerSlot[];
  readonly slaves: BrokerSlot[];
  /** The embedded controller's DLedger address ('' without the `controller` option). */
  readonly controllerAddr: string;
}

export function brokerAt(brokers: BrokerSlot[], i: number): BrokerSlot {
  const b = brokers[i];
  if (!b) throw new RangeError(`no broker ${i} (cluster has ${brokers.length})`);
  return b;
}

/** Where broker `b` really listens (the harness's own requests bypass any proxy in front). */
export function direct(ctx: ClusterContext, b: BrokerSlot): string {
  return `${ctx.bindHost}:${b.port}`;
}

export function running(b: BrokerSlot): boolean {
  return b.jvm !== null && b.jvm.child.exitCode === null && b.jvm.child.signalCode === null;
}
