/**
 * `rocketwire bench` against a real Apache RocketMQ broker (5.3.3 by default, jars from Maven
 * Central through the interop harness), with the Java reference push consumer and ali-ons consuming
 * the same messages in the same run. Prints the bench's JSON report plus the broker's boot time.
 *
 *   node dist/bench/e2e/real-broker.js [--messages N] [--size B] [--batch N] [--rounds N] [--handler-ms MS]
 *       [--consume-batch N] [--version 5.3.3] [--vs java,ali-ons,raw-pull,decode-pull] [--chart FILE] [-- more bench options]
 *
 * Options after `--` are handed to `rocketwire bench` as they are; with `--latency` (its own options
 * after `--`) the latency bench runs instead (bench/harness/latency.ts), with the broker JVM's CPU in its rows. With `--vs` naming trace or
 * java-trace the broker starts with traceTopicEnable=true (the traced consumers' records need
 * RMQ_SYS_TRACE_TOPIC).
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { benchArgs } from '../harness/args.js';
import { fileURLToPath } from 'node:url';
import { startRealCluster, V5_VERSION } from '../../test/interop/harness.js';
import { pidListeningOn } from '../harness/listen-pid.js';

const { values, positionals } = benchArgs('real-broker', {
  options: {
    messages: { type: 'string', default: '100000' },
    version: { type: 'string', default: V5_VERSION },
    vs: { type: 'string', default: 'java,ali-ons,raw-pull,decode-pull' },
    queues: { type: 'string', default: '8' },
    batch: { type: 'string', default: '1' },
    size: { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '3' },
    'handler-ms': { type: 'string', default: '0' },
    'consume-batch': { type: 'string', default: '1' },
    chart: { type: 'string' },
    latency: { type: 'boolean' },
  },
  allowPositionals: true,
});

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

async function main(): Promise<void> {
  // The full JIT for the broker: the harness's default favours boot time over throughput.
  // --vs trace / java-trace: the traced consumers' records go to RMQ_SYS_TRACE_TOPIC, which the broker creates with traceTopicEnable
  const traced = (values.vs ?? '').split(',').some((p) => p.trim() === 'trace' || p.trim() === 'java-trace');
  const cluster = await startRealCluster({
    version: values.version!,
    brokers: 1,
    brokerHeapMb: 1024,
    brokerJvmArgs: ['-XX:TieredStopAtLevel=4'],
    ...(traced ? { brokerConfig: { traceTopicEnable: true } } : {}),
  });
  try {
    const topic = `rw_real_bench_${Date.now().toString(36)}`;
    await cluster.createTopic(topic, { queues: Number(values.queues) });
    const latency = values.latency === true || positionals.includes('--latency');
    const brokerPid = latency ? pidListeningOn(cluster.brokers[0]!) : null;
    const args = latency
      ? [
          cli,
          'bench',
          '--namesrv',
          cluster.namesrv,
          '--topic',
          topic,
          '--queues',
          values.queues!,
          '--size',
          values.size!,
          '--json',
          ...(brokerPid ? ['--broker-pid', String(brokerPid)] : []),
          ...(positionals.includes('--latency') ? [] : ['--latency']),
          ...positionals,
        ]
      : [
          cli,
          'bench',
          '--namesrv',
          cluster.namesrv,
          '--topic',
          topic,
          '--messages',
          values.messages!,
          '--queues',
          values.queues!,
          '--batch',
          values.batch!,
          '--size',
          values.size!,
          '--rounds',
          values.rounds!,
          '--handler-ms',
          values['handler-ms']!,
          '--consume-batch',
          values['consume-batch']!,
          '--json',
          ...positionals,
        ];
    if (values.vs && !latency) args.push('--vs', values.vs);
    if (values.chart && !latency) args.push('--chart', values.chart);
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
      // The latency bench's --restart: SIGKILL the broker JVM, start it again on the same ports and
      // store (bootBroker waits until the name server lists it), and tell the bench its new pid.
      child.on('message', (m: { restartBroker?: boolean }) => {
        if (m.restartBroker !== true) return;
        void cluster
          .killBroker(0)
          .then(() => cluster.startBroker(0))
          .then(
            () => child.send({ brokerRestarted: true, pid: pidListeningOn(cluster.brokers[0]!) }),
            (err: Error) => child.send({ brokerRestarted: true, error: err.message }),
          );
      });
      let s = '';
      child.stdout!.on('data', (d: Buffer) => (s += d.toString()));
      child.once('close', (code) =>
        code === 0 ? resolve(s) : reject(new Error(`rocketwire bench exited with ${code}: ${s.trim()}`)),
      );
    });
    const report = JSON.parse(out) as Record<string, unknown>;
    process.stdout.write(
      JSON.stringify({ realBroker: values.version, brokerBootMs: cluster.bootMs.brokers[0], ...report }) + '\n',
    );
  } finally {
    await cluster.stop({ graceful: false });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`real-broker bench: ${err.message}\n`);
  process.exitCode = 1;
});
