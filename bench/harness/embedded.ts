import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from '../../lib/cli/common.js';
import { peakRssMb } from './proc-stats.js';

/** An embedded broker run as a child process, so that its memory and CPU are not counted as the client's. */
export interface ChildBroker {
  namesrv: string;
  broker: string;
  /** The current process (a restart changes it). */
  pid: number;
  /** Resident memory of the broker process in MiB, read from /proc (0 where unavailable). */
  rssMb(): number;
  /**
   * Stops the process (SIGTERM: the broker closes its store) and starts it again on the same ports
   * and data folder; resolves with the new pid once it printed its ready line.
   */
  restart(): Promise<number>;
  stop(): Promise<void>;
}

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

function portOf(addr: string): string {
  return addr.slice(addr.lastIndexOf(':') + 1);
}

/** Spawns `rocketwire broker` and waits for its ready line. */
async function spawnBroker(
  args: readonly string[],
  nodeArgs: readonly string[],
  timeoutMs: number,
): Promise<{ child: ChildProcess; namesrv: string; broker: string }> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, CLI, 'broker', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const ready = await new Promise<{ namesrv: string; broker: string }>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new CliError(`embedded broker not ready after ${timeoutMs} ms: ${stderr.trim()}`)),
      timeoutMs,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        const line = JSON.parse(out.slice(0, nl)) as { event: string; namesrv: string; broker: string };
        if (line.event !== 'ready') throw new CliError(`unexpected line ${out.slice(0, nl)}`);
        resolve(line);
      } catch (err) {
        reject(new CliError(`embedded broker printed an unexpected ready line: ${(err as Error).message}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new CliError(`embedded broker exited with code ${code}: ${stderr.trim().split('\n').pop() ?? ''}`));
    });
  }).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  return { child, ...ready };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * `nodeArgs`: options for the child's node (a benchmark profiles the broker with `--cpu-prof`);
 * `brokerArgs`: more `rocketwire broker` options (bench/hostile turns the property filter on).
 */
export async function startChildBroker(
  queues: number,
  timeoutMs = 30_000,
  nodeArgs: readonly string[] = [],
  brokerArgs: readonly string[] = [],
): Promise<ChildBroker> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-'));
  const cleanup = () => fs.rmSync(dataDir, { recursive: true, force: true });
  const args = (namesrvPort: string, brokerPort: string) => [
    '--namesrv-port',
    namesrvPort,
    '--broker-port',
    brokerPort,
    '--data',
    dataDir,
    '--queues',
    String(queues),
    ...brokerArgs,
  ];
  let first: Awaited<ReturnType<typeof spawnBroker>>;
  try {
    first = await spawnBroker(args('0', '0'), nodeArgs, timeoutMs);
  } catch (err) {
    cleanup();
    throw err;
  }
  let child = first.child;
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const broker: ChildBroker = {
    namesrv: first.namesrv,
    broker: first.broker,
    pid: child.pid!,
    rssMb: () => peakRssMb(child.pid!),
    async restart() {
      await stopProcess(child);
      child = (await spawnBroker(args(portOf(first.namesrv), portOf(first.broker)), nodeArgs, timeoutMs)).child;
      broker.pid = child.pid!;
      return broker.pid;
    },
    async stop() {
      process.removeListener('exit', kill);
      await stopProcess(child);
      cleanup();
    },
  };
  return broker;
}
