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
  pid: number;
  /** Resident memory of the broker process in MiB, read from /proc (0 where unavailable). */
  rssMb(): number;
  stop(): Promise<void>;
}

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

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
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeArgs,
      CLI,
      'broker',
      '--namesrv-port',
      '0',
      '--broker-port',
      '0',
      '--data',
      dataDir,
      '--queues',
      String(queues),
      ...brokerArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const cleanup = () => fs.rmSync(dataDir, { recursive: true, force: true });
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
    cleanup();
    throw err;
  });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return {
    ...ready,
    pid: child.pid!,
    rssMb: () => peakRssMb(child.pid!),
    async stop() {
      process.removeListener('exit', kill);
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
          child.kill('SIGTERM');
        });
      }
      cleanup();
    },
  };
}
