/**
 * The processes of `rocketwire bench --latency`: Node children (latency-child.ts) and JVMs
 * (test/interop/java/LatencyBench.java), each read as JSON lines and driven by lines on stdin.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CliError } from '../../lib/cli/common.js';
import { prepareJavaWith } from './lite.js';
import { cpuMs } from './proc-stats.js';

export type Line = Record<string, unknown> & { type: string };

/** One child process: its JSON lines, waited for by type, and commands written to its stdin. */
export class Proc {
  private readonly lines: Line[] = [];
  private readonly waiters: Array<{ match: (l: Line) => boolean; resolve: (l: Line) => void }> = [];
  private stderr = '';
  private exited: string | null = null;
  readonly child: ChildProcess;

  constructor(
    readonly name: string,
    cmd: string,
    args: string[],
    private readonly cleanup?: () => void,
    /** Where the child's other stdout lines go (node's `--trace-gc` prints there). */
    logFile?: string,
  ) {
    this.child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
    if (log) this.child.once('exit', () => log.end());
    this.child.stderr!.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    createInterface({ input: this.child.stdout! }).on('line', (text) => {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        log?.write(`${name} ${performance.now().toFixed(0)} ${text}\n`);
        return;
      }
      if (line.type === 'fatal') this.exited = String(line.error ?? line.message ?? 'fatal');
      const w = this.waiters.findIndex((x) => x.match(line));
      if (w >= 0) this.waiters.splice(w, 1)[0]!.resolve(line);
      else this.lines.push(line);
    });
    this.child.once('exit', (code) => {
      this.exited ??= `exited with code ${code}: ${this.stderr.trim().split('\n').slice(-3).join(' | ')}`;
      this.cleanup?.();
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  cpuMs(): number {
    return cpuMs(this.pid);
  }

  send(line: string): void {
    this.child.stdin!.write(line + '\n');
  }

  /** The next line of `type` (and matching `match`), within `timeoutMs`. */
  next(type: string, timeoutMs: number, match: (l: Line) => boolean = () => true): Promise<Line> {
    const m = (l: Line) => l.type === type && match(l);
    const i = this.lines.findIndex(m);
    if (i >= 0) return Promise.resolve(this.lines.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const waiter = {
        match: m,
        resolve: (l: Line) => {
          clearInterval(check);
          clearTimeout(timer);
          resolve(l);
        },
      };
      const fail = (why: string) => {
        clearInterval(check);
        clearTimeout(timer);
        const k = this.waiters.indexOf(waiter);
        if (k >= 0) this.waiters.splice(k, 1);
        reject(new CliError(`${this.name}: ${why}`));
      };
      const timer = setTimeout(() => fail(`no "${type}" line within ${timeoutMs} ms`), timeoutMs);
      const check = setInterval(() => this.exited !== null && fail(this.exited), 100);
      this.waiters.push(waiter);
    });
  }

  /** Asks for a phase's answer (`count N`, `end N`) and waits for it. */
  async ask(cmd: 'count' | 'end', phase: number, timeoutMs = 10_000): Promise<Line> {
    this.send(`${cmd} ${phase}`);
    return this.next(cmd === 'count' ? 'count' : 'phase', timeoutMs, (l) => l.phase === phase);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      this.child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      this.send('quit');
      this.child.stdin!.end();
    });
  }
}

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'latency-child.js');

export function nodeProc(name: string, role: string, args: string[], nodeArgs: string[] = [], logFile?: string): Proc {
  return new Proc(name, process.execPath, [...nodeArgs, CHILD, role, ...args], undefined, logFile);
}

export function javaProc(name: string, mode: 'consume' | 'produce', args: string[]): Proc {
  const cp = prepareJavaWith('LatencyBench');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-java-latency-'));
  return new Proc(
    name,
    'java',
    [
      '-Xms256m',
      '-Xmx1g',
      `-Duser.home=${home}`,
      '-Drocketmq.client.logRoot=' + path.join(home, 'logs'),
      '-cp',
      cp,
      'LatencyBench',
      mode,
      ...args,
    ],
    () => fs.rmSync(home, { recursive: true, force: true }),
  );
}
