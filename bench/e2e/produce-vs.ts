/**
 * `rocketwire bench --produce-vs` against a real Apache RocketMQ broker (5.3.3 by default, jars from
 * Maven Central through the interop harness, the full JIT): rocketwire's Producer, Java's
 * DefaultMQProducer and ali-ons's Producer in each mode, in the same run. Prints the bench's table
 * (or its JSON with --json, plus the broker's version and boot time).
 *
 *   node dist/bench/e2e/produce-vs.js [--messages 50000] [--size 1024] [--queues 8] [--rounds 3]
 *        [--vs java,ali-ons] [--modes sync-1,sync-4,sync-16,async-64,batch-32] [--compress on|off] [--version 5.3.3] [--json]
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { benchArgs } from '../harness/args.js';
import { fileURLToPath } from 'node:url';
import { startRealCluster, V5_VERSION } from '../../test/interop/harness.js';

const { values } = benchArgs('produce-vs', {
  options: {
    messages: { type: 'string', default: '50000' },
    size: { type: 'string', default: '1024' },
    queues: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    vs: { type: 'string', default: 'java,ali-ons' },
    modes: { type: 'string' },
    compress: { type: 'string', default: 'on' },
    version: { type: 'string', default: V5_VERSION },
    json: { type: 'boolean' },
  },
});

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

async function main(): Promise<void> {
  // The full JIT for the broker: the harness's default favours boot time over throughput.
  const cluster = await startRealCluster({
    version: values.version!,
    brokers: 1,
    brokerHeapMb: 1024,
    brokerJvmArgs: ['-XX:TieredStopAtLevel=4'],
  });
  try {
    const args = [
      cli,
      'bench',
      '--namesrv',
      cluster.namesrv,
      '--produce-vs',
      values.vs!,
      '--messages',
      values.messages!,
      '--size',
      values.size!,
      '--queues',
      values.queues!,
      '--rounds',
      values.rounds!,
      '--compress',
      values.compress!,
    ];
    if (values.modes) args.push('--produce-modes', values.modes);
    if (values.json) args.push('--json');
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let s = '';
      child.stdout.on('data', (d: Buffer) => (s += d.toString()));
      child.once('close', (code) =>
        code === 0 ? resolve(s) : reject(new Error(`rocketwire bench exited with ${code}: ${s.trim()}`)),
      );
    });
    if (values.json) {
      const report = JSON.parse(out) as Record<string, unknown>;
      process.stdout.write(
        JSON.stringify({ realBroker: values.version, brokerBootMs: cluster.bootMs.brokers[0], ...report }) + '\n',
      );
    } else {
      process.stdout.write(
        out.replace(
          /broker name server [^;\s]+/,
          `Apache RocketMQ ${values.version} (one broker, full JIT, booted in ${cluster.bootMs.brokers[0]} ms)`,
        ),
      );
    }
  } finally {
    await cluster.stop({ graceful: false });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`produce-vs bench: ${err.message}\n`);
  process.exitCode = 1;
});
