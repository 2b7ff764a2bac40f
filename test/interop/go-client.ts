/**
 * Runs the official Apache RocketMQ Go client (rocketmq-client-go v2, test/interop/go/main.go) from
 * tests, as java-client.ts runs the Java one. The program is built with `go build` once per content
 * hash (its go.mod, go.sum, Go sources and the Go version) into
 * ${ROCKETWIRE_CACHE:-~/.cache/rocketwire}/go-client-<hash>/rwgo, outside the repo; the modules
 * come from the Go module cache (`.ci/install-deps` runs `go mod download`). Each command prints
 * one JSON object per line and ends with a `summary` line.
 *
 *   const { sent } = await goProduce({ namesrv, topic: 'T', count: 10, mode: 'batch' });
 *   const c = await startGoConsumer({ namesrv, topic: 'T', group: 'g', expect: 10 });
 *   const { messages, summary } = await c.finished();   // or c.stop() for one started with expect 0
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cacheDir, repoRoot, run } from '../support/maven-jars.js';
import { trackProcess } from '../support/jvm.js';
import { until } from '../support/until.js';

/** The folder of the Go module (go.mod, go.sum, main.go). */
export function goModuleDir(): string {
  return join(repoRoot(), 'test', 'interop', 'go');
}

/** The rocketmq-client-go version go.mod requires, e.g. "v2.1.2". */
export function goClientVersion(): string {
  const mod = readFileSync(join(goModuleDir(), 'go.mod'), 'utf8');
  return /github\.com\/apache\/rocketmq-client-go\/v2 (\S+)/.exec(mod)?.[1] ?? 'unknown';
}

export interface GoBuild {
  bin: string;
  /** false when the binary of this content hash was already in the cache. */
  built: boolean;
  buildMs: number;
}

let building: Promise<GoBuild> | undefined;

/** Build (or find in the cache) the Go client program; rejects with go's output when it does not build. */
export function ensureGoClient(): Promise<GoBuild> {
  building ??= buildGoClient();
  building.catch(() => (building = undefined));
  return building;
}

async function buildGoClient(): Promise<GoBuild> {
  const dir = goModuleDir();
  const goVersion = await run('go', ['env', 'GOVERSION'], 30_000);
  if (goVersion.code !== 0) throw new Error(`go env GOVERSION failed: ${goVersion.stderr.trim()}`);
  const h = createHash('sha1').update(goVersion.stdout.trim());
  for (const f of readdirSync(dir)
    .filter((f) => f === 'go.mod' || f === 'go.sum' || f.endsWith('.go'))
    .sort())
    h.update(f).update(readFileSync(join(dir, f)));
  const out = join(cacheDir(), `go-client-${h.digest('hex').slice(0, 12)}`);
  const bin = join(out, 'rwgo');
  if (existsSync(bin)) return { bin, built: false, buildMs: 0 };
  mkdirSync(cacheDir(), { recursive: true });
  const tmp = mkdtempSync(`${out}.tmp-`);
  const start = Date.now();
  // -mod=readonly: go.mod and go.sum are committed and never rewritten by a build; a module missing
  // from the module cache is downloaded from the proxy (normally .ci/install-deps did it already).
  const res = await run(
    'go',
    ['build', '-mod=readonly', '-buildvcs=false', '-o', join(tmp, 'rwgo'), '.'],
    600_000,
    dir,
  );
  if (res.code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `go build of test/interop/go failed: ${(res.stderr + res.stdout).trim().split('\n').slice(-5).join(' | ')}`,
    );
  }
  try {
    renameSync(tmp, out);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another process built it first
  }
  return { bin, built: true, buildMs: Date.now() - start };
}

// ---- processes ------------------------------------------------------------------------------

export interface GoSent {
  type: 'sent';
  i: number;
  status: 'SEND_OK' | 'ONEWAY';
  msgId?: string;
  offsetMsgId?: string;
  brokerName?: string;
  queueId?: number;
  queueOffset?: number;
}

/** A delivery as the Go push consumer's listener saw it. */
export interface GoReceived {
  type: 'msg';
  status: 'CONSUME_SUCCESS' | 'RECONSUME_LATER' | 'SUSPEND_CURRENT_QUEUE_A_MOMENT';
  topic: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  msgId: string;
  offsetMsgId: string;
  tags: string;
  keys: string;
  properties: Record<string, string>;
  reconsumeTimes: number;
  bornTimestamp: number;
  storeTimestamp: number;
  /** When the listener got it (the Go process's clock, ms since the epoch). */
  receivedAt: number;
  body: string;
  bodySha1: string;
}

export type GoLine = Record<string, unknown> & { type: string };

export class GoClientError extends Error {
  constructor(
    message: string,
    readonly lines: GoLine[],
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'GoClientError';
  }
}

/** A running rwgo command; `lines` fills as its JSON lines arrive. */
export class GoProcess {
  readonly lines: GoLine[] = [];
  readonly done: Promise<{ code: number | null; lines: GoLine[]; stderr: string }>;
  private stderr = '';

  constructor(
    readonly child: ChildProcess,
    readonly command: string,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const s = line.trim();
      if (!s.startsWith('{')) return;
      try {
        this.lines.push(JSON.parse(s) as GoLine);
      } catch {
        // a partial line of a killed process
      }
    });
    child.stderr!.on('data', (d) => {
      this.stderr += d;
      if (this.stderr.length > 65_536) this.stderr = this.stderr.slice(-32_768);
    });
    this.done = new Promise((resolve) => {
      let code: number | null = null;
      child.once('exit', (c, sig) => (code = c ?? (sig ? -1 : null)));
      child.once('close', () => resolve({ code, lines: this.lines, stderr: this.stderr }));
      child.once('error', (err) => {
        this.stderr += String(err);
        resolve({ code: -1, lines: this.lines, stderr: this.stderr });
      });
    });
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The last lines of the client's log (stderr), for a failure message. */
  get log(): string {
    return this.stderr.split('\n').slice(-10).join('\n');
  }

  messages(): GoReceived[] {
    return this.lines.filter((l) => l.type === 'msg') as unknown as GoReceived[];
  }

  /** Waits for the first line matching `pred`; fails naming `what` if the process ends first. */
  async waitFor(pred: (line: GoLine) => boolean, what: string, limitMs = 30_000): Promise<GoLine> {
    await until(
      () => this.lines.some(pred) || this.exited,
      () => `rwgo ${this.command}: ${what}\n${this.log}`,
      limitMs,
    );
    const hit = this.lines.find(pred);
    if (!hit) {
      await this.done;
      throw new GoClientError(`rwgo ${this.command} ended before ${what}\n${this.log}`, this.lines, this.stderr);
    }
    return hit;
  }

  /** Resolves with the summary line once the command has ended by itself. */
  async finished(): Promise<{ summary: GoLine; messages: GoReceived[]; lines: GoLine[] }> {
    const { code, lines, stderr } = await this.done;
    const summary = lines.find((l) => l.type === 'summary');
    if (code !== 0 || !summary)
      throw new GoClientError(`rwgo ${this.command} exited ${code} without a summary\n${this.log}`, lines, stderr);
    return { summary, messages: this.messages(), lines };
  }

  /** Closes stdin (a consumer started with expect 0 then shuts down, persisting offsets) and waits for the summary. */
  async stop(): Promise<{ summary: GoLine; messages: GoReceived[]; lines: GoLine[] }> {
    this.child.stdin?.end();
    return this.finished();
  }

  /** SIGKILL, for teardown after a failure. */
  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

type Flags = Record<string, string | number | boolean | undefined>;

function flags(args: Flags): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined || v === false) continue;
    out.push(v === true ? `-${k}` : `-${k}=${v}`);
  }
  return out;
}

/** Starts `rwgo <command>` with `args` as -key=value flags. */
export async function startGo(command: string, args: Flags): Promise<GoProcess> {
  const { bin } = await ensureGoClient();
  const child = spawn(bin, [command, ...flags(args)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ROCKETMQ_GO_LOG_LEVEL: 'warn' },
  });
  trackProcess(child);
  return new GoProcess(child, command);
}

// ---- commands -------------------------------------------------------------------------------

export interface GoCommon {
  namesrv: string;
  /** The command gives up after this long (ms); default 60 s. */
  timeout?: number;
}

export interface GoProduceOptions extends GoCommon {
  topic: string;
  count: number;
  mode?: 'sync' | 'async' | 'oneway' | 'batch';
  batchSize?: number;
  group?: string;
  tag?: string;
  /** "{i}" is replaced by the message index. */
  keys?: string;
  /** "a={i},b=x" */
  props?: string;
  delay?: number;
  /** Orderly: sharding key "s<i mod K>", the queue picked by its hash. */
  sharding?: number;
  /** Body template, default "go-{i}". */
  body?: string;
}

export async function goProduce(o: GoProduceOptions): Promise<{ sent: GoSent[]; summary: GoLine }> {
  const p = await startGo('produce', {
    namesrv: o.namesrv,
    topic: o.topic,
    count: o.count,
    mode: o.mode,
    'batch-size': o.batchSize,
    group: o.group,
    tag: o.tag,
    keys: o.keys,
    props: o.props,
    delay: o.delay,
    sharding: o.sharding,
    body: o.body,
    timeout: o.timeout,
  });
  const { summary, lines } = await p.finished();
  return { sent: lines.filter((l) => l.type === 'sent') as unknown as GoSent[], summary };
}

export interface GoConsumeOptions extends GoCommon {
  topic: string;
  group: string;
  /** Ends after this many deliveries; 0 (default): when stop() closes its stdin. */
  expect?: number;
  orderly?: boolean;
  sql?: string;
  tags?: string;
  /** Fail each message's first delivery. */
  retryFirst?: boolean;
  /** Fail every delivery of a body starting with this. */
  failPrefix?: string;
  maxReconsume?: number;
  from?: 'first' | 'last';
}

/** Starts a Go push consumer; resolves once its Start() returned. */
export async function startGoConsumer(o: GoConsumeOptions): Promise<GoProcess> {
  const p = await startGo('consume', {
    namesrv: o.namesrv,
    topic: o.topic,
    group: o.group,
    expect: o.expect,
    orderly: o.orderly,
    sql: o.sql,
    tags: o.tags,
    'retry-first': o.retryFirst,
    'fail-prefix': o.failPrefix,
    'max-reconsume': o.maxReconsume,
    from: o.from,
    timeout: o.timeout,
  });
  await p.waitFor((l) => l.type === 'started', 'the consumer started');
  return p;
}

export interface GoTxOptions extends GoCommon {
  topic: string;
  group?: string;
  commit: number;
  rollback: number;
  /** Left unknown by the local transaction; the check-back commits even i and rolls back odd i. */
  check: number;
}

export interface GoChecked {
  type: 'checked';
  i: number;
  body: string;
  state: 'COMMIT' | 'ROLLBACK';
  transactionId: string;
  msgId: string;
}

/**
 * Starts a Go TransactionProducer: it sends every message at once (an `ended` line follows), answers
 * the broker's check-backs (`checked` lines) and stays up until stop(), whose summary counts them.
 */
export async function startGoTx(o: GoTxOptions): Promise<GoProcess> {
  return startGo('tx', {
    namesrv: o.namesrv,
    topic: o.topic,
    group: o.group,
    commit: o.commit,
    rollback: o.rollback,
    check: o.check,
    timeout: o.timeout,
  });
}

export function checkedLines(p: GoProcess): GoChecked[] {
  return p.lines.filter((l) => l.type === 'checked') as unknown as GoChecked[];
}

export type GoAdminOp = 'create-topic' | 'delete-topic' | 'topic-list' | 'groups' | 'queues';

/** One call of the Go admin package; the summary line carries `error` (null on success) and the result. */
export async function goAdmin(
  o: GoCommon & { op: GoAdminOp; broker?: string; topic?: string; queues?: number },
): Promise<GoLine & { error: string | null }> {
  const p = await startGo('admin', {
    namesrv: o.namesrv,
    op: o.op,
    broker: o.broker,
    topic: o.topic,
    queues: o.queues,
  });
  return (await p.finished()).summary as GoLine & { error: string | null };
}
