/**
 * The embedded broker of the simulated members curve, in a process of its own (its CPU is then
 * its own, read from /proc, and the bench process's bookkeeping of a thousand members does not
 * slow it): prints {namesrv, broker, pid} once ready; each `hb` line on stdin is answered with the
 * broker's HEART_BEAT counters (ConsumerManager.heartbeats) as a JSON line; stdin's end stops it.
 */
import { createInterface } from 'node:readline';
import { startBroker } from '../../lib/broker/index.js';
import { exitAfterStdout } from './exit-flushed.js';

const broker = await startBroker({ queues: 8 });
const counts = broker.instances[0]!.consumers.heartbeats;
process.stdout.write(JSON.stringify({ namesrv: broker.namesrv, pid: process.pid }) + '\n');
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (line.trim() === 'hb') process.stdout.write(JSON.stringify({ ...counts }) + '\n');
});
rl.once('close', () => {
  void broker.close().then(
    () => exitAfterStdout(0),
    () => exitAfterStdout(1),
  );
});
