/**
 * `rocketwire bench --curve members` against a real Apache RocketMQ broker (5.3.3 by default, one
 * broker from Maven Central jars through the interop harness), with the broker JVM's CPU:
 *
 *   node dist/bench/e2e/members-real.js [--version 5.3.3] -- --simulated --points 1,10,100,300,1000
 *   node dist/bench/e2e/members-real.js -- --points 1,2,4,8 --vs java
 *
 * Options after `--` go to `rocketwire bench --curve members` as they are. The broker's HEART_BEAT
 * counters cannot be read from a JVM, so the heartbeat bytes of a simulated point are those the
 * members sent (their client instances' counters; on the embedded broker the two agree).
 */
import { benchArgs } from '../harness/args.js';
import { runMembersCommand } from '../harness/members-command.js';
import { pidListeningOn } from '../harness/listen-pid.js';
import { startRealCluster, V5_VERSION } from '../../test/interop/harness.js';

const { values, positionals } = benchArgs('members-real', {
  options: { version: { type: 'string', default: V5_VERSION } },
  allowPositionals: true,
});

async function main(): Promise<void> {
  // The full JIT for the broker: the harness's default favours boot time over throughput.
  const cluster = await startRealCluster({
    version: values.version!,
    brokers: 1,
    brokerHeapMb: 1024,
    brokerJvmArgs: ['-XX:TieredStopAtLevel=4'],
  });
  try {
    const pid = pidListeningOn(cluster.brokers[0]!);
    const args = ['--curve', 'members', '--namesrv', cluster.namesrv, ...positionals];
    if (pid && positionals.includes('--simulated')) args.push('--broker-pid', String(pid));
    process.stderr.write(`Apache RocketMQ ${values.version} booted in ${cluster.bootMs.brokers[0]} ms\n`);
    process.exitCode = await runMembersCommand(args, {
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
    });
  } finally {
    await cluster.stop({ graceful: false });
  }
}

main().catch((err: Error) => {
  process.stderr.write(`members-real bench: ${err.message}\n`);
  process.exitCode = 1;
});
