import { brokerNameOf, MQClientInstance, topicRouteToSubscribeQueues, wrapNamespace } from '../client/index.js';
import { cliNamespace } from './namespace-flag.js';
import {
  CliError,
  UsageError,
  intOption,
  namesrvOption,
  parseOptions,
  printTable,
  requiredOption,
  stringOption,
  type CliCommand,
  type CliIO,
} from './common.js';
import { brokerPortHint } from './broker-port-hint.js';

const usage = `usage: rocketwire offsets [--namesrv ADDR] --topic T --group G [--timeout MS] [--json]

Shows a consumer group's progress on every queue of a topic: the committed offset (QUERY_CONSUMER_OFFSET),
the queue's max offset (GET_MAX_OFFSET) and the lag. committed is -1 when the group never committed on that
queue; its lag then counts every message still stored (max - min).

options:
  -n, --namesrv ADDR   name server(s), "host:port[;host:port]" (default: $NAMESRV_ADDR, else
                       $ROCKETWIRE_NAMESRV)
  -t, --topic T        topic
  -g, --group G        consumer group
  --namespace NS       Java's namespace: asks for NS%topic and NS%group
  --timeout MS         timeout of each request (default 3000); every queue is asked at once, so the
                       command takes about two timeouts at most (the route, then the queues)
  --json               a JSON array of {brokerName, queueId, committed, min, max, lag}
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
    namespace: { type: 'string' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
  });
  const namesrv = namesrvOption(values);
  const ns = cliNamespace(stringOption(values, 'namespace'));
  const topic = wrapNamespace(ns, requiredOption(values, 'topic'));
  const group = wrapNamespace(ns, requiredOption(values, 'group'));
  const timeoutMs = intOption('timeout', stringOption(values, 'timeout'), 3000, 1, 3_600_000);
  let instance: MQClientInstance;
  try {
    instance = MQClientInstance.acquire({
      namesrvAddr: namesrv,
      instanceName: `offsets-${process.pid}`,
      logger: false,
      mqClientApiTimeoutMs: timeoutMs,
      connectTimeoutMs: Math.min(timeoutMs, 3000),
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  try {
    const route = await instance.getTopicRoute(topic);
    // Every queue at once: asked one after another, a broker that does not answer cost three
    // timeouts per queue (24 s for 8 queues), not one.
    const rows: QueueProgress[] = await Promise.all(
      topicRouteToSubscribeQueues(topic, route).map(async (mq): Promise<QueueProgress> => {
        // A static topic's logic queue: asked at the broker leading it.
        const broker = brokerNameOf(instance, mq);
        const addr = instance.findBrokerMasterAddress(broker) ?? instance.findBrokerAddress(broker);
        if (!addr) throw new CliError(`broker ${broker} has no address`);
        const [committed, min, max] = await Promise.all([
          instance.queryConsumerOffset(addr, group, mq, timeoutMs),
          instance.getMinOffset(addr, mq, timeoutMs),
          instance.getMaxOffset(addr, mq, timeoutMs),
        ]);
        return {
          brokerName: mq.brokerName,
          queueId: mq.queueId,
          committed,
          min,
          max,
          lag: committed >= 0 ? Math.max(0, max - committed) : max - min,
        };
      }),
    );
    if (values.json === true) {
      io.stdout.write(JSON.stringify(rows) + '\n');
    } else {
      printTable(
        io.stdout,
        ['brokerName', 'queueId', 'committed', 'max', 'lag'],
        rows.map((r) => [r.brokerName, String(r.queueId), String(r.committed), String(r.max), String(r.lag)]),
      );
      io.stdout.write(`total lag ${rows.reduce((a, r) => a + r.lag, 0)}\n`);
    }
    return 0;
  } catch (err) {
    throw brokerPortHint(err, namesrv) ?? err;
  } finally {
    await instance.release();
  }
}

export const command: CliCommand = {
  summary: "show a consumer group's committed offsets, max offsets and lag per queue",
  usage,
  run,
};
