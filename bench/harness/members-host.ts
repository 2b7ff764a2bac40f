/**
 * One host process of the simulated members curve (members-sim.ts): many rocketwire push consumers
 * of one group in one Node process. Each member has its own instanceName, so its own clientId and
 * so its own MQClientInstance (instances are keyed by clientId, lib/client/mq-client-instance.ts):
 * its own RemotingClient and sockets, heartbeats, rebalance and offset store, as a member in a
 * process of its own would. The host checks that and reports the distinct instances it holds.
 *
 * argv: JSON of HostOptions. Commands on stdin, one JSON object a line:
 *   {cmd:'start', names:[…]}   start these members (a few at a time), each announced when started
 *   {cmd:'leave', name}        shut one member down
 *   {cmd:'stats'}              answer {type:'stats', …}: heartbeat counters of every instance, fds, RSS
 *   {cmd:'exit'}               shut every member down and exit
 * Prints JSON lines on stdout:
 *   {type:'started', name, clientId, ts, instances}   after the member's start() resolved
 *   {type:'left', name, ts}                           after its shutdown() resolved
 *   {type:'a', name, q:['broker:id', …], ts}          a member's held queues of the topic changed
 *   {type:'m', n:[…]}                                 message numbers handled since the last line
 *   {type:'stats', …}
 * ts are epoch milliseconds (performance.timeOrigin + performance.now()), comparable across processes.
 */
import * as fs from 'node:fs';
import { createInterface } from 'node:readline';
import { encodeHeartbeatBodies } from '../../lib/client/heartbeat.js';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { exitAfterStdout } from './exit-flushed.js';

export interface HostOptions {
  namesrv: string;
  topic: string;
  group: string;
  heartbeatIntervalMs: number;
  useHeartbeatV2: boolean;
  /** Members started at once by a `start` command. */
  startConcurrency: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as HostOptions;
const print = (line: object): void => {
  process.stdout.write(JSON.stringify(line) + '\n');
};
const epochMs = (): number => performance.timeOrigin + performance.now();

interface Member {
  consumer: PushConsumer;
  held: string;
}
const members = new Map<string, Member>();
/** Rebalance rounds of the members that left (the stats count every round the host's members ran). */
let departedRuns = 0;
let handled: number[] = [];

function handler(msgs: MessageExt[]): ConsumeConcurrentlyStatus {
  for (const m of msgs)
    if (m.body.length >= 8) handled.push(m.body.readUInt32BE(0) * 0x1_0000_0000 + m.body.readUInt32BE(4));
  return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
}

/** The distinct client instances the host's members run on (one each when the clientIds differ). */
function instances(): Set<unknown> {
  return new Set([...members.values()].map((m) => pushConsumerImpl(m.consumer).instance));
}

async function startOne(name: string): Promise<void> {
  const consumer = new PushConsumer({
    consumerGroup: opts.group,
    namesrvAddr: opts.namesrv,
    instanceName: name,
    consumeFromWhere: 'first',
    heartbeatIntervalMs: opts.heartbeatIntervalMs,
    useHeartbeatV2: opts.useHeartbeatV2,
    // Java's start(): a name server slow to answer (the broker busy with the group's rebalances)
    // does not fail the member; its routes come with the next poll
    startWithoutNameServer: true,
    subscriptions: { [opts.topic]: '*' },
  });
  members.set(name, { consumer, held: '' });
  await consumer.start(handler);
  const instance = pushConsumerImpl(consumer).instance!;
  print({ type: 'started', name, clientId: instance.clientId, ts: epochMs(), instances: instances().size });
}

async function startMany(names: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++]!;
      // the bench reports the failure and stops the curve at this point
      await startOne(name).catch((err: Error) => print({ type: 'failed', name, error: err.message }));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.startConcurrency) }, worker));
}

async function leave(name: string): Promise<void> {
  const m = members.get(name);
  if (!m) return;
  await m.consumer.shutdown();
  departedRuns += pushConsumerImpl(m.consumer).rebalance.counts.runs;
  members.delete(name);
  print({ type: 'left', name, ts: epochMs() });
}

function fds(): number {
  try {
    return fs.readdirSync('/proc/self/fd').length;
  } catch {
    return 0;
  }
}

function stats(): object {
  const hb = { full: 0, withoutSub: 0, bodyBytes: 0 };
  const seen = instances();
  for (const inst of seen as Set<{ heartbeatStats: typeof hb } | null>) {
    if (!inst) continue;
    hb.full += inst.heartbeatStats.full;
    hb.withoutSub += inst.heartbeatStats.withoutSub;
    hb.bodyBytes += inst.heartbeatStats.bodyBytes;
  }
  let rebalanceRuns = departedRuns;
  for (const m of members.values()) rebalanceRuns += pushConsumerImpl(m.consumer).rebalance.counts.runs;
  const first = [...members.values()][0];
  const bodies = first ? encodeHeartbeatBodies(pushConsumerImpl(first.consumer).instance!.heartbeatData(), true) : null;
  return {
    type: 'stats',
    members: members.size,
    instances: seen.size,
    heartbeats: hb,
    rebalanceRuns,
    heartbeatFullBytes: bodies?.full.length ?? 0,
    heartbeatWithoutSubBytes: bodies?.withoutSub?.length ?? 0,
    fds: fds(),
    rssMb: process.memoryUsage().rss / 2 ** 20,
    heapMb: process.memoryUsage().heapUsed / 2 ** 20,
    ts: epochMs(),
  };
}

const watch = setInterval(() => {
  const ts = epochMs();
  for (const [name, m] of members) {
    const q = m.consumer
      .assignment()
      .filter((mq) => mq.topic === opts.topic)
      .map((mq) => `${mq.brokerName}:${mq.queueId}`)
      .sort();
    const key = q.join(',');
    if (key !== m.held) {
      m.held = key;
      print({ type: 'a', name, q, ts });
    }
  }
  if (handled.length > 0) {
    print({ type: 'm', n: handled });
    handled = [];
  }
}, 10);

let exiting = false;
async function exit(): Promise<void> {
  clearInterval(watch);
  const names = [...members.keys()];
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < names.length) await members.get(names[next++]!)!.consumer.shutdown();
    }),
  );
  if (handled.length > 0) print({ type: 'm', n: handled });
}

let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (text) => {
  let c: { cmd?: string; names?: string[]; name?: string };
  try {
    c = JSON.parse(text) as typeof c;
  } catch {
    return;
  }
  // start and leave run at once (a leave must not wait for a start still under way); stats answers now
  if (c.cmd === 'start') queue = queue.then(() => startMany(c.names ?? []));
  else if (c.cmd === 'join') void startOne(c.name!).catch(fail);
  else if (c.cmd === 'leave') void leave(c.name!).catch(fail);
  else if (c.cmd === 'stats') print(stats());
  else if (c.cmd === 'exit') exitOnce();
  queue = queue.catch(fail);
});
process.stdin.once('end', exitOnce);

function exitOnce(): void {
  if (exiting) return;
  exiting = true;
  exit().then(() => exitAfterStdout(0), fail);
}

function fail(err: Error): void {
  process.stderr.write(`members host: ${err.message}\n`);
  process.exit(1);
}
