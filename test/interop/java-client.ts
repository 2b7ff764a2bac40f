/**
 * Runs the reference Java client (test/interop/java/RefClient.java: the stock Apache RocketMQ
 * producer, push consumer and admin API) from tests. The source is compiled with javac against the
 * version's client jars into the jar cache, once per source hash, and each command runs in its own
 * JVM printing one JSON object per line.
 *
 *   const sent = await javaProduce({ namesrv: cluster.namesrv, topic: 'T', count: 100 });
 *   const got = await javaConsume({ namesrv: cluster.namesrv, topic: 'T', group: 'g', expect: 100 });
 *   const offsets = await javaOffsets({ namesrv: cluster.namesrv, group: 'g', topic: 'T' });
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { type AclCredentials, ensureJars, jarsDir, repoRoot, run, trackProcess, V5_VERSION } from './harness.js';

export interface JavaCommonOptions {
  /** RocketMQ client version (jar set) to run; default 5.3.3. */
  version?: string;
  namesrv: string;
  acl?: AclCredentials;
  /** JVM user.home: where the client writes its logs. Default: a per-process temp folder. */
  homeDir?: string;
  /** Extra JVM flags, e.g. ['-Drocketmq.client.rebalance.waitInterval=1000']. */
  jvmArgs?: string[];
}

/** One line of `produce`. */
export interface JavaSent {
  type: 'sent';
  i: number;
  status: string;
  msgId: string;
  offsetMsgId: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  bodyLength: number;
  bodySha1: string;
}

/** One line of `consume`: a message as the Java push consumer saw it. */
export interface JavaReceived {
  type: 'msg';
  status: 'CONSUME_SUCCESS' | 'RECONSUME_LATER';
  topic: string;
  queueId: number;
  /** "127.0.0.1:port" of the master that stored it (also when read from a slave). */
  storeHost: string;
  queueOffset: number;
  commitLogOffset: number;
  msgId: string;
  offsetMsgId: string | null;
  tags: string | null;
  keys: string | null;
  properties: Record<string, string>;
  reconsumeTimes: number;
  sysFlag: number;
  bornTimestamp: number;
  storeTimestamp: number;
  bodyLength: number;
  bodySha1: string;
  /** Base64, only for bodies of at most 1024 bytes. */
  body?: string;
}

export interface JavaConsumeSummary {
  type: 'summary' | 'bench';
  received: number;
  reconsumeLater: number;
  expected: number;
  complete: boolean;
  startTs: number;
  firstTs: number;
  lastTs: number;
  elapsedMs: number;
  msgsPerSec?: number;
}

export interface JavaOffsets {
  type: 'offsets';
  group: string;
  queues: Array<{ topic: string; brokerName: string; queueId: number; brokerOffset: number; consumerOffset: number }>;
  diffTotal: number;
  /** Set when the admin API found no committed offset for the group at all. */
  error?: string;
}

export class JavaClientError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly lines: unknown[],
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'JavaClientError';
  }
}

// ---- compile --------------------------------------------------------------------------------

const compiled = new Map<string, Promise<string>>();

/** Compile RefClient.java for `version` (cached by source hash); resolves to its classes folder. */
export function ensureRefClient(version: string = V5_VERSION): Promise<string> {
  let p = compiled.get(version);
  if (!p) {
    p = compileRefClient(version);
    compiled.set(version, p);
    p.catch(() => compiled.delete(version));
  }
  return p;
}

/**
 * The Java sources compiled for `version`: RefClient.java always (it compiles against 4.9 and 5.x);
 * every other `*.java` beside it (feature clients using 5.x-only API: transactions, request-reply,
 * lite pull, ...) only for 5.x versions.
 */
function javaSources(version: string): string[] {
  const dir = join(repoRoot(), 'test', 'interop', 'java');
  const others = version.startsWith('4.')
    ? []
    : readdirSync(dir)
        .filter((f) => f.endsWith('.java') && f !== 'RefClient.java')
        .sort();
  return ['RefClient.java', ...others].map((f) => join(dir, f));
}

async function compileRefClient(version: string): Promise<string> {
  await ensureJars([version]);
  const srcs = javaSources(version);
  const h = createHash('sha1');
  for (const src of srcs) h.update(src).update(readFileSync(src));
  const hash = h.digest('hex').slice(0, 12);
  const out = join(jarsDir(version), '..', `refclient-${hash}`);
  if (existsSync(join(out, 'RefClient.class'))) return out;
  mkdirSync(join(out, '..'), { recursive: true });
  const tmp = mkdtempSync(`${out}.tmp-`);
  const res = await run(
    'javac',
    ['-nowarn', '-encoding', 'UTF-8', '-cp', join(jarsDir(version), '*'), '-d', tmp, ...srcs],
    120_000,
  );
  if (res.code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `javac ${srcs.map((s) => basename(s)).join(' ')} against RocketMQ ${version} failed:\n${res.stderr}${res.stdout}`,
    );
  }
  try {
    renameSync(tmp, out);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another process compiled it first
  }
  return out;
}

// ---- processes --------------------------------------------------------------------------------

let defaultHome: string | undefined;
function homeFor(opts: JavaCommonOptions): string {
  if (opts.homeDir) return opts.homeDir;
  if (!defaultHome) {
    const home = mkdtempSync(join(tmpdir(), 'rocketwire-java-'));
    process.once('exit', () => rmSync(home, { recursive: true, force: true }));
    defaultHome = home;
  }
  return defaultHome;
}

/** A running RefClient JVM; `lines` fills as JSON lines arrive. */
export class RefClientProcess {
  readonly lines: Array<Record<string, unknown>> = [];
  readonly done: Promise<{ code: number | null; lines: Array<Record<string, unknown>>; stderr: string }>;
  private stderr = '';
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly child: ChildProcess,
    readonly command: string,
  ) {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const s = line.trim();
      if (!s.startsWith('{')) return; // client logging that escaped to stdout
      try {
        this.lines.push(JSON.parse(s) as Record<string, unknown>);
      } catch {
        return;
      }
      for (const w of this.waiters.splice(0)) w();
    });
    child.stderr!.on('data', (d) => {
      this.stderr += d;
      if (this.stderr.length > 65_536) this.stderr = this.stderr.slice(-32_768);
    });
    this.done = new Promise((resolve) => {
      let code: number | null = null;
      child.once('exit', (c, sig) => (code = c ?? (sig ? -1 : null)));
      // 'close' comes after stdout has been read to the end.
      child.once('close', () => {
        for (const w of this.waiters.splice(0)) w();
        resolve({ code, lines: this.lines, stderr: this.stderr });
      });
      child.once('error', (err) => {
        this.stderr += String(err);
        resolve({ code: -1, lines: this.lines, stderr: this.stderr });
      });
    });
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Resolve with the first line matching `pred` (also ones already received). */
  async waitFor(
    pred: (line: Record<string, unknown>) => boolean,
    timeoutMs = 30_000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.lines.find(pred);
      if (hit) return hit;
      const fatal = this.lines.find((l) => l.type === 'fatal');
      if (fatal)
        throw new JavaClientError(
          `RefClient ${this.command}: ${String(fatal.error)}`,
          this.child.exitCode,
          this.lines,
          this.stderr,
        );
      if (this.exited && this.child.stdout!.readableEnded) {
        throw new JavaClientError(
          `RefClient ${this.command} exited (${this.child.exitCode}) before the expected line`,
          this.child.exitCode,
          this.lines,
          this.stderr,
        );
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new JavaClientError(
          `RefClient ${this.command}: expected line not seen within ${timeoutMs} ms`,
          null,
          this.lines,
          this.stderr,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** SIGTERM (the client's shutdown hook persists offsets), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.done;
    clearTimeout(timer);
  }
}

/**
 * Start RefClient `command` with `args` (already in --key value form); `mainClass` runs another class
 * of test/interop/java/ (5.x only) with the same conventions (command first, JSON lines out).
 */
export async function spawnRefClient(
  command: string,
  args: string[],
  opts: JavaCommonOptions & { bench?: boolean; mainClass?: string },
): Promise<RefClientProcess> {
  const version = opts.version ?? V5_VERSION;
  const classes = await ensureRefClient(version);
  const home = homeFor(opts);
  const v4 = version.startsWith('4.');
  const jvm = [
    '-Xms32m',
    '-Xmx256m',
    '-XX:+UseSerialGC',
    // Short-lived functional runs start faster with C1 only; the benchmark wants the full JIT.
    ...(opts.bench ? [] : ['-XX:TieredStopAtLevel=1']),
    `-Duser.home=${home}`,
    // mqadmin's updateStaticTopic writes its mapping files there: with the home, not into /tmp
    `-Djava.io.tmpdir=${home}`,
    `-Drocketmq.client.logRoot=${join(home, 'logs')}`,
    ...(v4 ? [] : ['-Drmq.logback.configurationFile=rmq.client.logback.xml']),
    ...(opts.jvmArgs ?? []),
  ];
  const acl = opts.acl ? ['--ak', opts.acl.accessKey, '--sk', opts.acl.secretKey] : [];
  const child = spawn(
    'java',
    [
      ...jvm,
      '-cp',
      `${classes}:${join(jarsDir(version), '*')}`,
      opts.mainClass ?? 'RefClient',
      command,
      '--namesrv',
      opts.namesrv,
      ...args,
      ...acl,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  trackProcess(child);
  return new RefClientProcess(child, command);
}

function flag(name: string, value: string | number | undefined): string[] {
  return value === undefined ? [] : [`--${name}`, String(value)];
}

// ---- commands --------------------------------------------------------------------------------

export interface JavaProduceOptions extends JavaCommonOptions {
  topic: string;
  count: number;
  /** Body size in bytes (default 128); body i is `expectedBody(i, size)`. */
  size?: number;
  tag?: string;
  /** "{i}" is replaced by the message index. */
  keys?: string;
  props?: Record<string, string>;
  group?: string;
  /** Send every message to this queue id. */
  queue?: number;
  /** Print only the summary (for large counts). */
  quiet?: boolean;
  timeoutMs?: number;
}

export async function javaProduce(o: JavaProduceOptions): Promise<{
  sent: JavaSent[];
  summary: { sent: number; failed: number; elapsedMs: number; msgsPerSec: number };
  /** The JVM's stderr (its last 32 KiB or more), for what a Java agent logged. */
  stderr: string;
}> {
  const props = o.props
    ? Object.entries(o.props)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')
    : undefined;
  const p = await spawnRefClient(
    'produce',
    [
      '--topic',
      o.topic,
      '--count',
      String(o.count),
      ...flag('size', o.size),
      ...flag('tag', o.tag),
      ...flag('keys', o.keys),
      ...flag('props', props),
      ...flag('group', o.group),
      ...flag('queue', o.queue),
      ...(o.quiet ? ['--quiet'] : []),
    ],
    o,
  );
  const summary = await p
    .waitFor((l) => l.type === 'summary', o.timeoutMs ?? 120_000)
    .catch(async (err) => {
      await p.stop();
      throw err;
    });
  const { code, lines, stderr } = await p.done;
  if (code !== 0) {
    const errors = lines
      .filter((l) => l.type === 'error')
      .slice(0, 3)
      .map((l) => String(l.error));
    throw new JavaClientError(`java produce failed (exit ${code}): ${errors.join('; ')}`, code, lines, stderr);
  }
  return { sent: lines.filter((l) => l.type === 'sent') as unknown as JavaSent[], summary: summary as never, stderr };
}

export interface JavaConsumeOptions extends JavaCommonOptions {
  topic: string;
  group: string;
  /** Stop after this many successfully consumed messages (0: run for timeoutMs). */
  expect?: number;
  timeoutMs?: number;
  from?: 'first' | 'last';
  /** Subscription expression (default "*"). */
  tagExpr?: string;
  /** Answer RECONSUME_LATER to the first K first-time deliveries. */
  reconsumeLaterFirst?: number;
  /** Delay level for those retries (1 = 1 s); default: the broker's choice (level 3 = 10 s). */
  delayLevel?: number;
  threads?: number;
  /** consumeMessageBatchMaxSize. */
  batchMax?: number;
  /** Each listener call sleeps this long after counting its messages (the bench's --handler-ms). */
  handlerMs?: number;
  /** consume-bench: no per-message lines, a `bench` summary with msgs/s. */
  bench?: boolean;
  /** Print a {type:'progress', received, ts} line every this many ms. */
  progressMs?: number;
}

export interface JavaConsumer {
  readonly process: RefClientProcess;
  /** Messages so far (empty for bench runs). */
  readonly messages: JavaReceived[];
  /** Resolves when the consumer exits (expect reached or timeout); rejects on a fatal error. */
  readonly done: Promise<{ summary: JavaConsumeSummary; messages: JavaReceived[]; stderr: string }>;
  stop(): Promise<void>;
}

/** Start a Java push consumer; resolves once it has started (subscribed and running). */
export async function startJavaConsumer(o: JavaConsumeOptions): Promise<JavaConsumer> {
  const p = await spawnRefClient(
    o.bench ? 'consume-bench' : 'consume',
    [
      '--topic',
      o.topic,
      '--group',
      o.group,
      ...flag('expect', o.expect),
      ...flag('timeout-ms', o.timeoutMs ?? 60_000),
      ...flag('from', o.from),
      ...flag('tag-expr', o.tagExpr),
      ...flag('reconsume-later-first', o.reconsumeLaterFirst),
      ...flag('delay-level', o.delayLevel),
      ...flag('threads', o.threads),
      ...flag('batch-max', o.batchMax),
      ...flag('handler-ms', o.handlerMs),
      ...flag('progress-ms', o.progressMs),
    ],
    o,
  );
  await p
    .waitFor((l) => l.type === 'started', 60_000)
    .catch(async (err) => {
      await p.stop();
      throw err;
    });
  const done = p.done.then(({ code, lines, stderr }) => {
    const summary = lines.find((l) => l.type === 'summary' || l.type === 'bench') as unknown as
      | JavaConsumeSummary
      | undefined;
    const fatal = lines.find((l) => l.type === 'fatal');
    if (!summary || fatal) {
      throw new JavaClientError(
        `java consume failed (exit ${code}): ${fatal ? String(fatal.error) : 'no summary'}`,
        code,
        lines,
        stderr,
      );
    }
    return { summary, messages: lines.filter((l) => l.type === 'msg') as unknown as JavaReceived[], stderr };
  });
  done.catch(() => undefined); // observed by the caller through `done`
  return {
    process: p,
    get messages() {
      return p.lines.filter((l) => l.type === 'msg') as unknown as JavaReceived[];
    },
    done,
    stop: () => p.stop(),
  };
}

/** Start a Java push consumer and wait for it to finish. */
export async function javaConsume(
  o: JavaConsumeOptions,
): Promise<{ summary: JavaConsumeSummary; messages: JavaReceived[]; stderr: string }> {
  const c = await startJavaConsumer(o);
  return c.done;
}

/** Consumer progress of `group` (broker max offset and committed consumer offset per queue). */
export async function javaOffsets(o: JavaCommonOptions & { group: string; topic?: string }): Promise<JavaOffsets> {
  const p = await spawnRefClient('offsets', ['--group', o.group, ...flag('topic', o.topic)], o);
  const line = await p.waitFor((l) => l.type === 'offsets', 60_000);
  await p.done;
  return line as unknown as JavaOffsets;
}

/** The body RefClient's producer sends as message i: "<i>:" then a repeating a-z pattern. */
export function expectedBody(i: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  const head = Buffer.from(`${i}:`, 'ascii');
  for (let k = 0; k < size; k++) b[k] = k < head.length ? head[k]! : 97 + ((k * 7 + i) % 26);
  return b;
}

export function sha1(b: Buffer): string {
  return createHash('sha1').update(b).digest('hex');
}

/** A Java producer sending without pause, its 'sent' and 'error' lines stamped with the wall time they arrived. */
export interface JavaProduceStream {
  readonly process: RefClientProcess;
  sent(): Array<{ at: number; line: Record<string, unknown> }>;
  errors(): Array<{ at: number; line: Record<string, unknown> }>;
  stop(): Promise<void>;
}

/**
 * Starts `produce` for `count` messages and stamps each line as it arrives (checked every 20 ms),
 * for measurements over time (a failover: when sends stop and resume); stop() ends the JVM.
 */
export async function javaProduceStream(o: JavaProduceOptions): Promise<JavaProduceStream> {
  const p = await spawnRefClient(
    'produce',
    ['--topic', o.topic, '--count', String(o.count), ...flag('group', o.group), ...flag('size', o.size)],
    o,
  );
  const stamped: Array<{ at: number; line: Record<string, unknown> }> = [];
  const timer = setInterval(() => {
    const now = Date.now();
    for (let i = stamped.length; i < p.lines.length; i++) stamped.push({ at: now, line: p.lines[i]! });
  }, 20);
  return {
    process: p,
    sent: () => stamped.filter((s) => s.line.type === 'sent'),
    errors: () => stamped.filter((s) => s.line.type === 'error'),
    async stop() {
      clearInterval(timer);
      await p.stop();
    },
  };
}
