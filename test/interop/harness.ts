/**
 * Runs a real Apache RocketMQ name server and broker(s) for the interop suite, from the jars that
 * test/interop/fetch-jars.sh put in ${ROCKETWIRE_CACHE:-~/.cache/rocketwire}/rmq-<version>/lib.
 *
 *   const cluster = await startRealCluster({ version: '5.3.3', brokers: 1 });
 *   t.teardown(() => cluster.stop());
 *   await cluster.createTopic('T1', { queues: 4 });
 *   ... cluster.namesrv ('127.0.0.1:port'), cluster.brokers[0] ('127.0.0.1:port') ...
 *
 * Every JVM listens on loopback ports picked at run time and stores on a temporary folder under
 * /dev/shm (the broker refuses writes on a disk more than 90 % full, so tmpfs keeps it away from
 * the real disk). No JVM outlives the test process: an 'exit' hook SIGKILLs them, and a small
 * watchdog shell, fed by a pipe from this process, stops them and removes the folders if this
 * process dies without running its hooks (SIGKILL, a runner's timeout).
 *
 * The readiness checks talk to the servers with a raw socket and the protocol/ codec only, so the
 * harness does not depend on lib/remoting.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import * as net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createRequest,
  decodeCommand,
  encodeCommand,
  FrameDecoder,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';

/** The newest 5.3.x and the newest 4.x whose server jars are on Maven Central (4.9.8's are not). */
export const V5_VERSION = '5.3.3';
export const V4_VERSION = '4.9.7';
/** The newest release whose jars all resolve from Maven Central (5.5.1's client jar is not served). */
export const V55_VERSION = '5.5.0';
export const CLUSTER_NAME = 'DefaultCluster';

export interface AclCredentials {
  accessKey: string;
  secretKey: string;
}

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

export interface TopicRoute {
  brokerDatas: Array<{ brokerName: string; cluster: string; brokerAddrs: Record<string, string> }>;
  queueDatas: Array<{ brokerName: string; perm: number; readQueueNums: number; writeQueueNums: number }>;
  [key: string]: unknown;
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
}

// ---- locations ------------------------------------------------------------------------------

/** The repository root (the folder holding package.json), found from this file in test/ or dist/test/. */
export function repoRoot(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(d, 'package.json')) && existsSync(join(d, 'test', 'interop'))) return d;
    d = dirname(d);
  }
  throw new Error('cannot find the rocketwire repository root from ' + fileURLToPath(import.meta.url));
}

export function cacheDir(): string {
  return process.env.ROCKETWIRE_CACHE || join(homedir(), '.cache', 'rocketwire');
}

export function jarsDir(version: string): string {
  return join(cacheDir(), `rmq-${version}`, 'lib');
}

export function jarsPresent(version: string): boolean {
  // 5.x: the proxy's extra jars too (rmq-<version>/proxy, fetched by the same script).
  const proxyOk = version.startsWith('4.') || existsSync(join(cacheDir(), `rmq-${version}`, 'proxy', '.complete'));
  return existsSync(join(jarsDir(version), '.complete')) && proxyOk;
}

/** Run fetch-jars.sh for `versions` (a no-op for versions already fetched). Rejects with its stderr. */
export async function ensureJars(versions: string[]): Promise<void> {
  if (versions.includes('4.9.8')) {
    throw new Error(
      `RocketMQ 4.9.8's broker and name-server jars were never published to Maven Central; use ${V4_VERSION} (V4_VERSION)`,
    );
  }
  const missing = versions.filter((v) => !jarsPresent(v));
  if (missing.length === 0) return;
  const script = join(repoRoot(), 'test', 'interop', 'fetch-jars.sh');
  const { code, stderr } = await run('bash', [script, ...missing], 15 * 60_000);
  if (code !== 0 || missing.some((v) => !jarsPresent(v))) {
    throw new Error(`fetch-jars.sh ${missing.join(' ')} failed: ${stderr.trim().split('\n').pop() ?? ''}`);
  }
}

function runRoot(): string {
  try {
    if (statSync('/dev/shm').isDirectory()) return '/dev/shm';
  } catch {
    // no tmpfs here: fall back to the temp folder
  }
  return tmpdir();
}

// ---- process bookkeeping ----------------------------------------------------------------------

const liveJvms = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let watchDir: string | undefined;

/**
 * Register a child process (a JVM) to be stopped if this process exits while it still runs: the
 * 'exit' hook SIGKILLs it, and the watchdog stops it if this process dies without running hooks.
 */
export function trackProcess(child: ChildProcess): void {
  const dir = ensureWatchdog();
  liveJvms.add(child);
  const pidFile = join(dir, 'pids', String(child.pid));
  if (child.pid !== undefined) writeFileSync(pidFile, String(child.pid));
  child.once('exit', () => {
    liveJvms.delete(child);
    rmSync(pidFile, { force: true });
  });
}

/** Register a folder to be removed when this process exits (or dies). */
export function trackDir(path: string): void {
  const dir = ensureWatchdog();
  liveDirs.add(path);
  writeFileSync(join(dir, 'dirs', hashName(path)), path);
}

export function untrackDir(path: string): void {
  liveDirs.delete(path);
  if (watchDir) rmSync(join(watchDir, 'dirs', hashName(path)), { force: true });
}

function hashName(path: string): string {
  return Buffer.from(path).toString('base64url');
}

/**
 * One per test process: an 'exit' hook, and a shell that waits for EOF on a pipe from this process.
 * If this process dies without its hook (SIGKILL, a runner's timeout signal), the pipe closes and
 * the shell SIGTERMs the JVMs listed in <watchDir>/pids, SIGKILLs them 10 s later and removes the
 * folders listed in <watchDir>/dirs.
 */
function ensureWatchdog(): string {
  if (watchDir) return watchDir;
  const dir = mkdtempSync(join(runRoot(), 'rocketwire-watch-'));
  mkdirSync(join(dir, 'pids'));
  mkdirSync(join(dir, 'dirs'));
  watchDir = dir;
  const script =
    'read _ ; cd "$1" || exit 0; for f in pids/*; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done; ' +
    'sleep 10; for f in pids/*; do [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null; done; ' +
    'for f in dirs/*; do [ -f "$f" ] && rm -rf "$(cat "$f")"; done; cd /; rm -rf "$1"';
  const wd = spawn('sh', ['-c', script, 'rocketwire-watchdog', dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  wd.unref();
  (wd.stdin as unknown as net.Socket | null)?.unref?.();
  wd.on('error', () => undefined);
  process.once('exit', () => {
    for (const c of liveJvms) {
      try {
        if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    try {
      wd.kill('SIGKILL');
    } catch {
      // already gone
    }
  });
  return dir;
}

// ---- ports ---------------------------------------------------------------------------------

const reservedPorts = new Set<number>();

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    // 0.0.0.0 collides with a listener on any local address, the broker's HA port binds all of them.
    s.listen({ port, host: '0.0.0.0', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/**
 * A broker listen port p with p-2 (fast channel), p and p+1 (HA) free. Picked below the Linux
 * ephemeral range (32768+) so outgoing connections do not take them in the meantime.
 */
async function pickBrokerPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const p = 20_000 + 4 * Math.floor(Math.random() * 3000) + 2;
    const block = [p - 2, p - 1, p, p + 1];
    if (block.some((x) => reservedPorts.has(x))) continue;
    let ok = true;
    for (const x of block) if (!(await portFree(x))) ok = false;
    if (!ok) continue;
    block.forEach((x) => reservedPorts.add(x));
    return p;
  }
  throw new Error('no free block of 4 ports found for a broker');
}

async function pickPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const p = 20_000 + Math.floor(Math.random() * 12_000);
    if (reservedPorts.has(p) || !(await portFree(p))) continue;
    reservedPorts.add(p);
    return p;
  }
  throw new Error('no free port found');
}

// ---- raw remoting ------------------------------------------------------------------------------

let nextOpaque = 1;

/**
 * A bare remoting connection (protocol/ codec only): requests are matched to responses by opaque;
 * requests the server sends (e.g. NOTIFY_CONSUMER_IDS_CHANGED) are collected in `serverRequests`.
 */
export class RawConnection {
  readonly serverRequests: RemotingCommand[] = [];
  /** Responses whose opaque matched no pending request (e.g. an answer to a oneway request). */
  readonly unmatchedResponses: RemotingCommand[] = [];
  private readonly sock: net.Socket;
  private readonly pending = new Map<
    number,
    { resolve: (c: RemotingCommand) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private readonly connected: Promise<void>;
  private failure: Error | null = null;

  constructor(
    readonly addr: string,
    private readonly acl: AclCredentials | null = null,
  ) {
    const [host, port] = splitAddr(addr);
    this.sock = net.connect({ host, port: Number(port) });
    const decoder = new FrameDecoder();
    this.connected = new Promise((resolve, reject) => {
      this.sock.once('connect', resolve);
      this.sock.once('error', reject);
    });
    this.connected.catch(() => undefined);
    this.sock.on('data', (chunk) => {
      try {
        decoder.push(chunk, (frame) => {
          const cmd = decodeCommand(Buffer.from(frame));
          if ((cmd.flag & 1) === 0) {
            this.serverRequests.push(cmd);
            return;
          }
          const p = this.pending.get(cmd.opaque);
          if (!p) {
            this.unmatchedResponses.push(cmd);
            return;
          }
          this.pending.delete(cmd.opaque);
          clearTimeout(p.timer);
          p.resolve(cmd);
        });
      } catch (err) {
        this.fail(err as Error);
      }
    });
    this.sock.on('error', (err) => this.fail(err));
    this.sock.on('close', () => this.fail(new Error(`connection to ${addr} closed`)));
  }

  async invoke(request: RemotingCommand, timeoutMs = 5000): Promise<RemotingCommand> {
    await this.connected;
    if (this.failure) throw this.failure;
    const req: RemotingCommand = { ...request, opaque: nextOpaque++ };
    if (this.acl) req.extFields = signed(req, this.acl);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(req.opaque);
        reject(new Error(`no answer from ${this.addr} to request code ${req.code} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(req.opaque, { resolve, reject, timer });
      this.sock.write(encodeCommand(req));
    });
  }

  /** Send a oneway request (flag bit 1); nothing comes back. */
  async invokeOneway(request: RemotingCommand): Promise<void> {
    await this.connected;
    if (this.failure) throw this.failure;
    const req: RemotingCommand = { ...request, opaque: nextOpaque++, flag: request.flag | 2 };
    if (this.acl) req.extFields = signed(req, this.acl);
    this.sock.write(encodeCommand(req));
  }

  close(): void {
    this.sock.destroy();
    this.fail(new Error(`connection to ${this.addr} closed by the caller`));
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const [opaque, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(opaque);
      p.reject(this.failure);
    }
  }
}

/**
 * Send one request on a new TCP connection and wait for the response with the same opaque.
 * With `acl`, signs it the way the Java AclClientRPCHook does: HmacSHA1 (Base64) over the values of
 * all ext fields, AccessKey included, in key order, followed by the body.
 */
export async function rawInvoke(
  addr: string,
  request: RemotingCommand,
  options: { timeoutMs?: number; acl?: AclCredentials | null } = {},
): Promise<RemotingCommand> {
  const conn = new RawConnection(addr, options.acl ?? null);
  try {
    return await conn.invoke(request, options.timeoutMs ?? 5000);
  } finally {
    conn.close();
  }
}

function signed(req: RemotingCommand, acl: AclCredentials): Record<string, string> {
  const fields: Record<string, string> = { ...(req.extFields ?? {}), AccessKey: acl.accessKey };
  delete fields.Signature;
  const keys = Object.keys(fields).sort();
  const content = Buffer.concat([
    Buffer.from(keys.map((k) => fields[k]).join(''), 'utf8'),
    req.body ?? Buffer.alloc(0),
  ]);
  const signature = createHmac('sha1', acl.secretKey).update(content).digest('base64');
  return { ...fields, Signature: signature };
}

function splitAddr(addr: string): [string, string] {
  const i = addr.lastIndexOf(':');
  return [addr.slice(0, i).replace(/^\[|\]$/g, ''), addr.slice(i + 1)];
}

/** Parse a route body: standard JSON, or fastjson's form with unquoted numeric map keys. */
export function parseRouteBody(body: Buffer | null): TopicRoute {
  const text = body?.toString('utf8') ?? '';
  try {
    return JSON.parse(text) as TopicRoute;
  } catch {
    return JSON.parse(text.replace(/([{,])(-?\d+):/g, '$1"$2":')) as TopicRoute;
  }
}

// ---- the cluster ----------------------------------------------------------------------------

interface Jvm {
  name: string;
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

interface BrokerSlot {
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

export async function startRealCluster(options: RealClusterOptions = {}): Promise<RealCluster> {
  const version = options.version ?? V5_VERSION;
  await ensureJars([version]);
  const v4 = version.startsWith('4.');
  const lib = jarsDir(version);
  const dir = mkdtempSync(join(runRoot(), `rocketwire-rmq-${version}-`));
  trackDir(dir);
  const home = join(dir, 'home');
  mkdirSync(join(home, 'conf'), { recursive: true });
  if (v4) writeV4Logback(home);
  if (v4 && options.acl) writePlainAcl(home, options.acl);

  const stopped = { all: false };
  const jvmStart = (
    name: string,
    procHome: string,
    jvmArgs: string[],
    mainArgs: string[],
    classPath = join(lib, '*'),
  ): Jvm => {
    mkdirSync(procHome, { recursive: true });
    const out = join(procHome, 'stdout.log');
    const fd = openSync(out, 'a');
    const child = spawn(
      'java',
      [
        ...jvmArgs,
        '-XX:-OmitStackTraceInFastThrow',
        ...JDK17_FLAGS,
        `-Duser.home=${procHome}`,
        `-Drocketmq.home.dir=${home}`,
        '-cp',
        classPath,
        ...mainArgs,
      ],
      { stdio: ['ignore', fd, fd], cwd: procHome },
    );
    closeSync(fd);
    child.unref();
    trackProcess(child);
    const exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null)));
      child.once('error', () => resolve(-1));
    });
    return { name, child, out, exited };
  };

  const stopJvm = async (jvm: Jvm | null, graceful: boolean): Promise<void> => {
    if (!jvm || jvm.child.exitCode !== null || jvm.child.signalCode !== null) return;
    jvm.child.kill(graceful ? 'SIGTERM' : 'SIGKILL');
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), graceful ? 20_000 : 5_000)));
    if ((await Promise.race([jvm.exited, bound])) === 'timeout') {
      jvm.child.kill('SIGKILL');
      await jvm.exited;
    }
    clearTimeout(timer);
  };

  // Name server. 5.x binds 127.0.0.1 and may take port 0 (the boot line then names the port);
  // 4.9 always binds every interface and does not print its port, so it gets a picked one.
  const nsHome = join(dir, 'namesrv');
  mkdirSync(nsHome);
  const nsPort = v4 ? await pickPort() : 0;
  const nsConf = join(nsHome, 'namesrv.conf');
  writeFileSync(nsConf, `listenPort=${nsPort}\nbindAddress=127.0.0.1\nkvConfigPath=${join(nsHome, 'kvConfig.json')}\n`);
  const nsStart = Date.now();
  let nsJvm: Jvm | null = null;
  const brokers: BrokerSlot[] = [];
  const slaves: BrokerSlot[] = [];
  let proxyJvm: Jvm | null = null;
  const allJvms = (): Array<Jvm | null> => [nsJvm, ...brokers.map((b) => b.jvm), ...slaves.map((b) => b.jvm), proxyJvm];
  const cleanupOnFailure = async (err: unknown): Promise<never> => {
    const t = tailOf(allJvms(), 30);
    await Promise.all(allJvms().map((j) => stopJvm(j, false)));
    rmSync(dir, { recursive: true, force: true });
    untrackDir(dir);
    throw new Error(`${(err as Error).message}\n${t}`);
  };

  let namesrv = '';
  try {
    nsJvm = jvmStart(
      'namesrv',
      nsHome,
      [
        '-server',
        '-Xms64m',
        '-Xmx192m',
        '-XX:MaxDirectMemorySize=128m',
        '-XX:TieredStopAtLevel=1',
        ...logbackFlag(v4, 'namesrv'),
      ],
      ['org.apache.rocketmq.namesrv.NamesrvStartup', '-c', nsConf],
    );
    const line = await waitForLine(
      nsJvm,
      /The Name Server boot success\. serializeType=\w+(?:, address ([\d.]+:\d+))?/,
      options.namesrvBootTimeoutMs ?? 30_000,
    );
    namesrv = v4 ? `127.0.0.1:${nsPort}` : line[1]!.replace(/^0\.0\.0\.0:/, '127.0.0.1:');
  } catch (err) {
    return cleanupOnFailure(err);
  }
  const nsBootMs = Date.now() - nsStart;

  const brokerCount = options.brokers ?? 1;
  for (let i = 0; i < brokerCount; i++) {
    const name = `broker-${String.fromCharCode(97 + i)}`;
    const bHome = join(dir, name);
    const master: BrokerSlot = { name, id: 0, port: 0, home: bHome, conf: join(bHome, 'broker.conf'), jvm: null };
    brokers.push(master);
    if (options.slaves) {
      const sHome = join(dir, `${name}-s`);
      slaves.push({ name, id: 1, master, port: 0, home: sHome, conf: join(sHome, 'broker.conf'), jvm: null });
    }
  }
  const bindHost = options.brokerBindHost ?? '127.0.0.1';
  const bootMs: number[] = brokers.map(() => 0);
  const slaveBootMs: number[] = slaves.map(() => 0);
  const heap = options.brokerHeapMb ?? 512;
  const brokerJvmArgs = [
    '-server',
    '-Xms128m',
    `-Xmx${heap}m`,
    '-XX:MaxDirectMemorySize=512m',
    // C1 only: a boot costs about 4.5 instead of 7.5 CPU seconds, which matters on 2 shared cores.
    // Benchmarks that want the full JIT pass brokerJvmArgs: ['-XX:TieredStopAtLevel=4'] (last wins).
    '-XX:TieredStopAtLevel=1',
    ...(options.serializeType === 'ROCKETMQ' ? ['-Drocketmq.serialize.type=ROCKETMQ'] : []),
    ...(options.brokerJvmArgs ?? []),
  ];

  const writeBrokerConf = (b: BrokerSlot) => {
    mkdirSync(b.home, { recursive: true });
    const store = join(b.home, 'store');
    const conf: Record<string, string | number | boolean> = {
      brokerClusterName: CLUSTER_NAME,
      brokerName: b.name,
      brokerId: b.id,
      brokerRole: b.master ? 'SLAVE' : 'ASYNC_MASTER',
      // 4.9: naming the master's HA address saves the round through the name server. 5.3.3 must
      // not have it: BrokerController.initialize hands it to the HA service before
      // DefaultMessageStore.start() has created the HA client, which drops it ("HAClient connect to
      // master null failed" forever), and a configured address turns off taking it from the
      // name server's registration result.
      ...(b.master && v4 ? { haMasterAddress: `127.0.0.1:${b.master.port + 1}` } : {}),
      ...(options.slaves ? { slaveReadEnable: true } : {}),
      flushDiskType: 'ASYNC_FLUSH',
      namesrvAddr: namesrv,
      brokerIP1: '127.0.0.1',
      brokerIP2: '127.0.0.1',
      bindAddress: bindHost,
      listenPort: b.port,
      haListenPort: b.port + 1,
      storePathRootDir: store,
      storePathCommitLog: join(store, 'commitlog'),
      mappedFileSizeCommitLog: 128 * 1024 * 1024,
      mappedFileSizeConsumeQueue: 600_000,
      maxIndexNum: 200_000,
      maxHashSlotNum: 50_000,
      autoCreateTopicEnable: true,
      defaultTopicQueueNums: 8,
      autoCreateSubscriptionGroup: true,
      enablePropertyFilter: true,
      longPollingEnable: true,
      useEpollNativeSelector: false,
      transientStorePoolEnable: false,
      timerWheelEnable: false,
      waitTimeMillsInSendQueue: 1000,
      ...aclBrokerConfig(v4, options.acl),
      ...(options.brokerConfig ?? {}),
    };
    writeFileSync(
      b.conf,
      Object.entries(conf)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
    );
  };

  const waitForRoute = async (
    topic: string,
    o: { brokers?: string[]; exact?: boolean; timeoutMs?: number } = {},
  ): Promise<TopicRoute> => {
    const want = o.brokers ?? brokers.filter((b) => b.jvm && b.jvm.child.exitCode === null).map((b) => b.name);
    const deadline = Date.now() + (o.timeoutMs ?? 30_000);
    let last = '';
    for (;;) {
      try {
        const res = await rawInvoke(
          namesrv,
          createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic } }),
          { timeoutMs: 3000 },
        );
        if (res.code === ResponseCode.SUCCESS) {
          const route = parseRouteBody(res.body);
          const names = new Set(route.brokerDatas.map((d) => d.brokerName));
          const queued = new Set(route.queueDatas.map((q) => q.brokerName));
          const extra = o.exact ? [...names].filter((n) => !want.includes(n)) : [];
          if (want.every((n) => names.has(n) && queued.has(n)) && extra.length === 0) return route;
          last = `route lists ${[...names].join(',') || 'no broker'}`;
        } else {
          last = `code ${res.code} ${res.remark ?? ''}`;
        }
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`route of ${topic} never listed ${want.join(',')}: ${last}`);
      await delay(200);
    }
  };

  /** Whether the cluster's route lists `b` (its brokerName with its brokerId's address). */
  const listed = async (b: BrokerSlot, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        const route = await waitForRoute(CLUSTER_NAME, {
          brokers: [b.name],
          timeoutMs: Math.max(0, deadline - Date.now()),
        });
        const addrs = route.brokerDatas.find((d) => d.brokerName === b.name)?.brokerAddrs ?? {};
        if (addrs[String(b.id)] === `127.0.0.1:${b.port}`) return;
        last = `${b.name} lists ${JSON.stringify(addrs)}`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`${b.name} (brokerId ${b.id}) never registered: ${last}`);
      await delay(200);
    }
  };

  const bootBroker = async (b: BrokerSlot): Promise<number> => {
    const start = Date.now();
    for (let attempt = 0; ; attempt++) {
      if (b.port === 0) b.port = await pickBrokerPort();
      writeBrokerConf(b);
      b.jvm = jvmStart(
        b.master ? `${b.name}-slave` : b.name,
        b.home,
        [...brokerJvmArgs, ...logbackFlag(v4, 'broker')],
        ['org.apache.rocketmq.broker.BrokerStartup', '-c', b.conf],
      );
      try {
        await waitForLine(b.jvm, /The broker\[[^\]]*\] boot success/, options.brokerBootTimeoutMs ?? 60_000);
        break;
      } catch (err) {
        // A port taken between the check and the bind makes the JVM exit: try other ports.
        if (attempt < 2 && b.jvm.child.exitCode !== null && /Address already in use|bind/i.test(readText(b.jvm.out))) {
          b.port = 0;
          continue;
        }
        throw err;
      }
    }
    // The broker prints "boot success" even when it has not registered; the route is the proof.
    // 5.3.3 registers at start only with the name servers its remoting client has already found
    // reachable, and that scan runs on another thread: about every other boot it has not finished,
    // nothing is registered, and the periodic registration comes 10 s later. Changing
    // brokerPermission (to its current value, read+write) makes the broker register everything at once.
    if (!v4) {
      const registered = await listed(b, 1000).then(
        () => true,
        () => false,
      );
      if (!registered) {
        await rawInvoke(
          direct(b),
          createRequest(RequestCode.UPDATE_BROKER_CONFIG, { body: Buffer.from('brokerPermission=6\n') }),
          {
            acl: options.acl ?? null,
            timeoutMs: 10_000,
          },
        ).catch(() => undefined); // the periodic registration still comes
      }
    }
    await listed(b, options.brokerBootTimeoutMs ?? 60_000);
    return Date.now() - start;
  };

  /** Poll GET_ALL_TOPIC_CONFIG on `b` until it knows `topic` (a 4.9 slave copies its master's every 10 s). */
  const waitForTopicOn = async (b: BrokerSlot, topic: string): Promise<void> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await rawInvoke(direct(b), createRequest(RequestCode.GET_ALL_TOPIC_CONFIG), {
        acl: options.acl ?? null,
        timeoutMs: 5000,
      }).catch(() => null);
      if (res?.code === ResponseCode.SUCCESS && (res.body?.toString('utf8') ?? '').includes(JSON.stringify(topic)))
        return;
      if (Date.now() > deadline)
        throw new Error(`${b.name} (brokerId ${b.id}) never copied topic ${topic} from its master`);
      await delay(250);
    }
  };

  /** Where broker `b` really listens (the harness's own requests bypass any proxy in front). */
  function direct(b: BrokerSlot): string {
    return `${bindHost}:${b.port}`;
  }

  const slotOf = (i: number, slave: boolean | undefined): BrokerSlot => {
    const b = brokerAt(slave ? slaves : brokers, i);
    return b;
  };
  const running = (b: BrokerSlot): boolean =>
    b.jvm !== null && b.jvm.child.exitCode === null && b.jvm.child.signalCode === null;

  try {
    // Sequential: on two cores, parallel JVM boots take about as long and make failures harder to read.
    // A slave after its master: it needs the master's HA port.
    for (let i = 0; i < brokers.length; i++) {
      bootMs[i] = await bootBroker(brokers[i]!);
      if (slaves[i]) slaveBootMs[i] = await bootBroker(slaves[i]!);
    }
  } catch (err) {
    return cleanupOnFailure(err);
  }

  // The proxy (5.x): cluster mode, remoting and gRPC on picked ports, its classes in rmq-<v>/proxy.
  let proxyAddr = '';
  if (options.proxy) {
    if (v4) return cleanupOnFailure(new Error(`RocketMQ ${version} has no proxy (5.x only)`));
    try {
      const pHome = join(dir, 'proxy');
      mkdirSync(pHome, { recursive: true });
      const [remotingPort, grpcPort] = [await pickPort(), await pickPort()];
      const pConf = join(pHome, 'rmq-proxy.json');
      writeFileSync(
        pConf,
        JSON.stringify({
          rocketMQClusterName: CLUSTER_NAME,
          namesrvAddr: namesrv,
          remotingListenPort: remotingPort,
          grpcServerPort: grpcPort,
          ...(typeof options.proxy === 'object' ? options.proxy : {}),
        }),
      );
      proxyJvm = jvmStart(
        'proxy',
        pHome,
        [
          '-server',
          '-Xms64m',
          '-Xmx256m',
          '-XX:MaxDirectMemorySize=256m',
          '-XX:TieredStopAtLevel=1',
          '-Drmq.logback.configurationFile=rmq.proxy.logback.xml',
        ],
        ['org.apache.rocketmq.proxy.ProxyStartup', '-pc', pConf, '-pm', 'cluster'],
        `${join(lib, '*')}:${join(dirname(lib), 'proxy', '*')}`,
      );
      await waitForLine(proxyJvm, /rocketmq-proxy startup successfully/, options.brokerBootTimeoutMs ?? 60_000);
      proxyAddr = `127.0.0.1:${remotingPort}`;
    } catch (err) {
      return cleanupOnFailure(err);
    }
  }

  const cluster: RealCluster = {
    version,
    namesrv,
    brokers: brokers.map((b) => `127.0.0.1:${b.port}`),
    slaves: slaves.map((b) => `127.0.0.1:${b.port}`),
    brokerBinds: brokers.map((b) => direct(b)),
    proxy: proxyAddr,
    brokerNames: brokers.map((b) => b.name),
    clusterName: CLUSTER_NAME,
    dir,
    logs: { namesrv: nsHome, brokers: brokers.map((b) => b.home), slaves: slaves.map((b) => b.home) },
    bootMs: { namesrv: nsBootMs, brokers: bootMs, slaves: slaveBootMs },
    acl: options.acl,
    async stop(o = {}) {
      if (stopped.all) return;
      stopped.all = true;
      const graceful = o.graceful ?? true;
      // Brokers first so that they can unregister, then the name server; a SIGKILL run does all at once.
      if (graceful) {
        await stopJvm(proxyJvm, true);
        await Promise.all([...brokers, ...slaves].map((b) => stopJvm(b.jvm, true)));
        await stopJvm(nsJvm, true);
      } else {
        await Promise.all(allJvms().map((j) => stopJvm(j, false)));
      }
      if (process.env.ROCKETWIRE_KEEP_INTEROP === '1') {
        process.stderr.write(`interop: kept ${dir} (ROCKETWIRE_KEEP_INTEROP=1)\n`);
      } else {
        rmSync(dir, { recursive: true, force: true });
      }
      untrackDir(dir);
      for (const b of [...brokers, ...slaves])
        [b.port - 2, b.port - 1, b.port, b.port + 1].forEach((p) => reservedPorts.delete(p));
    },
    async stopBroker(i, o = {}) {
      await stopJvm(slotOf(i, o.slave).jvm, !o.kill);
    },
    async killBroker(i, o = {}) {
      await stopJvm(slotOf(i, o.slave).jvm, false);
    },
    async startBroker(i, o = {}) {
      const b = slotOf(i, o.slave);
      if (running(b)) throw new Error(`${b.name}${o.slave ? ' (slave)' : ''} is running`);
      const ms = await bootBroker(b);
      if (o.slave) slaveBootMs[i] = ms;
      else bootMs[i] = ms;
    },
    isRunning(i, o = {}) {
      return running(slotOf(i, o.slave));
    },
    async waitForReplica(i, topic, o = {}) {
      const master = slotOf(i, false);
      const slave = slotOf(i, true);
      const queues = o.queues ?? 4;
      const deadline = Date.now() + (o.timeoutMs ?? 30_000);
      const maxOffsets = async (b: BrokerSlot): Promise<number[]> => {
        const out: number[] = [];
        for (let q = 0; q < queues; q++) {
          const res = await rawInvoke(
            direct(b),
            createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic, queueId: String(q) } }),
            {
              acl: options.acl ?? null,
            },
          );
          out.push(res.code === ResponseCode.SUCCESS ? Number(res.extFields?.offset ?? -1) : -1);
        }
        return out;
      };
      let last = '';
      for (;;) {
        try {
          const [m, s] = [await maxOffsets(master), await maxOffsets(slave)];
          if (m.every((x, q) => x >= 0 && x === s[q])) return m;
          last = `master ${m.join(',')}, slave ${s.join(',')}`;
        } catch (err) {
          last = (err as Error).message;
        }
        if (Date.now() > deadline) throw new Error(`${master.name}'s slave never caught up on ${topic}: ${last}`);
        await delay(100);
      }
    },
    async waitForBrokerIds(topic, i, ids, o = {}) {
      const name = brokerAt(brokers, i).name;
      const want = [...ids].sort().join(',');
      const deadline = Date.now() + (o.timeoutMs ?? 30_000);
      let last = '';
      for (;;) {
        try {
          const res = await rawInvoke(
            namesrv,
            createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic } }),
            { timeoutMs: 3000 },
          );
          if (res.code === ResponseCode.SUCCESS) {
            const route = parseRouteBody(res.body);
            const addrs = route.brokerDatas.find((d) => d.brokerName === name)?.brokerAddrs ?? {};
            const have = Object.keys(addrs).sort().join(',');
            if (have === want) return route;
            last = `${name} has brokerIds [${have}]`;
          } else {
            last = `code ${res.code} ${res.remark ?? ''}`;
          }
        } catch (err) {
          last = (err as Error).message;
        }
        if (Date.now() > deadline)
          throw new Error(`route of ${topic} never listed brokerIds [${want}] for ${name}: ${last}`);
        await delay(100);
      }
    },
    async createTopic(topic, o = {}) {
      const queues = o.queues ?? 4;
      const which = o.brokers ?? brokers.map((_, i) => i);
      // Slaves too: a slave copies its master's topics only every 10 s (SlaveSynchronize), and
      // answers a pull for a topic it does not know with TOPIC_NOT_EXIST.
      const targets = which.flatMap((i) => [
        brokerAt(brokers, i),
        ...(slaves[i] && running(slaves[i]!) ? [slaves[i]!] : []),
      ]);
      for (const b of targets) {
        const req = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
          extFields: {
            topic,
            defaultTopic: 'TBW102',
            readQueueNums: String(queues),
            writeQueueNums: String(queues),
            perm: String(o.perm ?? 6),
            topicFilterType: 'SINGLE_TAG',
            topicSysFlag: '0',
            order: 'false',
            // 5.x topic attributes, as AttributeParser reads them: "+key=value,+key2=value2".
            ...(o.attributes
              ? {
                  attributes: Object.entries(o.attributes)
                    .map(([k, v]) => `+${k}=${v}`)
                    .join(','),
                }
              : {}),
          },
        });
        const res = await rawInvoke(direct(b), req, { acl: options.acl ?? null, timeoutMs: 10_000 });
        // 4.9 slaves refuse ("Can't modify topic or subscription group from slave broker"): wait for their copy.
        if (b.master && res.code !== ResponseCode.SUCCESS && /slave/i.test(res.remark ?? '')) {
          await waitForTopicOn(b, topic);
          continue;
        }
        if (res.code !== ResponseCode.SUCCESS)
          throw new Error(`create topic ${topic} on ${b.name}: code ${res.code} ${res.remark ?? ''}`);
      }
      return waitForRoute(topic, { brokers: which.map((i) => brokerAt(brokers, i).name) });
    },
    waitForRoute,
    connect(addr, o = {}) {
      return new RawConnection(addr, o.acl === undefined ? (options.acl ?? null) : o.acl);
    },
    invoke(addr, request, o = {}) {
      return rawInvoke(addr, request, {
        timeoutMs: o.timeoutMs ?? 5000,
        acl: o.acl === undefined ? (options.acl ?? null) : o.acl,
      });
    },
    tail(lines = 20) {
      return tailOf(allJvms(), lines);
    },
  };
  return cluster;
}

function brokerAt(brokers: BrokerSlot[], i: number): BrokerSlot {
  const b = brokers[i];
  if (!b) throw new RangeError(`no broker ${i} (cluster has ${brokers.length})`);
  return b;
}

/**
 * Flags for JDK 17+. 4.9 unmaps files through JDK internals (MappedFile.clean) and fails without
 * the java.nio / jdk.internal.ref / sun.nio.ch ones; 5.x needs none with our config, they are cheap
 * insurance for paths that reach the same internals.
 */
const JDK17_FLAGS = [
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-exports=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens=java.base/java.lang=ALL-UNNAMED',
  '--add-opens=java.base/java.util=ALL-UNNAMED',
];

function logbackFlag(v4: boolean, role: string): string[] {
  // 5.x: every JVM would otherwise pick the broker's configuration, the first found on the class path.
  return v4 ? [] : [`-Drmq.logback.configurationFile=rmq.${role}.logback.xml`];
}

/** 4.9 loads $ROCKETMQ_HOME/conf/logback_<role>.xml and exits when it is missing. */
function writeV4Logback(home: string): void {
  for (const role of ['namesrv', 'broker', 'tools']) {
    writeFileSync(
      join(home, 'conf', `logback_${role}.xml`),
      `<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>\${user.home}/logs/${role}.log</file>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5p [%t] %c{0} - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
`,
    );
  }
}

/** 4.9 plain ACL: one admin account, no white-listed address (so loopback must sign too). */
function writePlainAcl(home: string, acl: AclCredentials): void {
  writeFileSync(
    join(home, 'conf', 'plain_acl.yml'),
    `globalWhiteRemoteAddresses: []\naccounts:\n  - accessKey: ${acl.accessKey}\n    secretKey: ${acl.secretKey}\n    whiteRemoteAddress:\n    admin: true\n`,
  );
}

/**
 * 5.3.x replaced plain ACL with auth 2.0: users live in a RocksDB under <store>/config, the initial
 * user is created at boot as a SUPER user (allowed everything), and requests are signed as before.
 */
function aclBrokerConfig(v4: boolean, acl: AclCredentials | undefined): Record<string, string | boolean> {
  if (!acl) return {};
  if (v4) return { aclEnable: true };
  return {
    authenticationEnabled: true,
    authenticationProvider: 'org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider',
    authenticationMetadataProvider:
      'org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider',
    authorizationEnabled: true,
    authorizationProvider: 'org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider',
    authorizationMetadataProvider: 'org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider',
    initAuthenticationUser: JSON.stringify({ username: acl.accessKey, password: acl.secretKey }),
    innerClientAuthenticationCredentials: JSON.stringify({ accessKey: acl.accessKey, secretKey: acl.secretKey }),
  };
}

// ---- small helpers ----------------------------------------------------------------------------

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function tailOf(jvms: Array<Jvm | null>, lines: number): string {
  return jvms
    .filter((j): j is Jvm => j !== null)
    .map((j) => {
      // Drop logback's own status chatter (5.x prints ~150 lines of it at boot).
      const body = readText(j.out)
        .split('\n')
        .filter((l) => !/\|-(INFO|WARN) in /.test(l))
        .slice(-lines)
        .join('\n');
      return `--- ${j.name} (${j.out}) ---\n${body}`;
    })
    .join('\n');
}

/** Poll the JVM's stdout file for `re`; fail at once if the JVM exits, or after `timeoutMs`. */
async function waitForLine(jvm: Jvm, re: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void jvm.exited.then((c) => (exitCode = c));
  for (;;) {
    const m = readText(jvm.out).match(re);
    if (m) return m;
    if (exitCode !== undefined) throw new Error(`${jvm.name} exited with code ${exitCode} before it was ready`);
    if (Date.now() > deadline) throw new Error(`${jvm.name} not ready within ${timeoutMs} ms`);
    await delay(100);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Run a command to completion, capturing its output (used for fetch-jars.sh and javac). */
export function run(
  cmd: string,
  args: string[],
  timeoutMs: number,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: stderr + String(err) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
