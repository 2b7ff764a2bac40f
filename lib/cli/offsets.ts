import { MQClientInstance, topicRouteToSubscribeQueues } from '../client/index.js';
import { CliError, UsageError, parseOptions, requiredOption, type CliCommand, type CliIO } from './common.js';

const usage = `usage: rocketwire offsets --namesrv ADDR --topic T --group G [--json]

Shows a consumer group's progress on every queue of a topic: the committed offset (QUERY_CONSUMER_OFFSET),
the queue's max offset (GET_MAX_OFFSET) and the lag. committed is -1 when the group never committed on that
queue; its lag then counts every message still stored (max - min).

options:
  --namesrv ADDR   name server(s), "host:port[;host:port]"
  --topic T        topic
  --group G        consumer group
  --json           a JSON array of {brokerName, queueId, committed, min, max, lag}
`;

export interface QueueProgress {
  brokerName: string;
  queueId: number;
  committed: number;
  min: number;
  max: number;
  lag: number;
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    namesrv: { type: 'string' },
    topic: { type: 'string' },
    group: { type: 'string' },
    json: { type: 'boolean' },
  });
  const namesrv = requiredOption(values, 'namesrv');
  const topic = requiredOption(values, 'topic');
  const group = requiredOption(values, 'group');
  let instance: MQClientInstance;
  try {
    instance = MQClientInstance.acquire({ namesrvAddr: namesrv, instanceName: `offsets-${process.pid}` });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  try {
    const route = await instance.getTopicRoute(topic);
    const rows: QueueProgress[] = [];
    for (const mq of topicRouteToSubscribeQueues(topic, route)) {
      const addr = instance.findBrokerMasterAddress(mq.brokerName) ?? instance.findBrokerAddress(mq.brokerName);
      if (!addr) throw new CliError(`broker ${mq.brokerName} has no address`);
      const [committed, min, max] = await Promise.all([
        instance.queryConsumerOffset(addr, group, mq),
        instance.getMinOffset(addr, mq),
        instance.getMaxOffset(addr, mq),
      ]);
      rows.push({ brokerName: mq.brokerName, queueId: mq.queueId, committed, min, max, lag: committed >= 0 ? Math.max(0, max - committed) : max - min });
    }
    if (values.json === true) {
      io.stdout.write(JSON.stringify(rows) + '\n');
    } else {
      const header = ['brokerName', 'queueId', 'committed', 'max', 'lag'];
      const table = [header, ...rows.map((r) => [r.brokerName, String(r.queueId), String(r.committed), String(r.max), String(r.lag)])];
      const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      for (const row of table) io.stdout.write(row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd() + '\n');
      io.stdout.write(`total lag ${rows.reduce((a, r) => a + r.lag, 0)}\n`);
    }
    return 0;
  } finally {
    await instance.release();
  }
}

export const command: CliCommand = {
  summary: "show a consumer group's committed offsets, max offsets and lag per queue",
  usage,
  run,
};
