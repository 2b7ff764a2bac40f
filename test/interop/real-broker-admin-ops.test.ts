// The operator commands of `rocketwire admin` against a real Apache RocketMQ 5.3.3 broker, each
// compared with what Java's own mqadmin prints or does on the same cluster (one JVM per batch of
// mqadmin commands, java/MqadminBatchClient.java): broker config read by both and written by each,
// producer connections, a broker's write permission wiped and added (same topic counts), a topic's
// perm set by each and seen by the other, offsets cloned by each (same offsets), a backlog skipped
// (mqadmin's consumerProgress sees no lag), and a group switched to POP that then consumes by POP.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { Operations, type MessageExt } from '../../protocol/internal.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';
import { until } from '../consumer/helpers.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { mqadminBatch, mqadminRows, type MqadminOutput } from './java-admin.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

if (await interopReady(t, [V5_VERSION])) {
  const started = Date.now();
  // POP writes its checkpoints through the timer wheel: without it a 5.3.3 broker pops nothing
  const cluster = await startRealCluster({ version: V5_VERSION, brokerConfig: { timerWheelEnable: true } });
  t.teardown(() => cluster.stop({ graceful: false }));
  const ns = cluster.namesrv;
  const addr = cluster.brokers[0]!;
  const brokerName = cluster.brokerNames[0]!;
  const topic = 'OpsTopic';
  const permTopic = 'OpsPermTopic';
  await cluster.createTopic(topic, { queues: 4 });
  await cluster.createTopic(permTopic, { queues: 2 });
  const admin = new AdminClient({ namesrvAddr: ns, mqClientApiTimeoutMs: 10_000 });
  t.teardown(() => admin.close());
  const cli = (...args: string[]): Promise<CliRun> => runCli(['admin', ...args, '--namesrv', ns, '--timeout', '10000']);
  async function json<T>(...args: string[]): Promise<T> {
    const r = await cli(...args, '--json');
    if (r.code !== 0) throw new Error(`rocketwire admin ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  }
  const out = (batch: MqadminOutput[], command: string): string => {
    const o = batch.find((b) => b.command === command);
    if (!o) throw new Error(`no mqadmin output for ${command}`);
    return o.output + o.stderr;
  };
  /** getBrokerConfig's "key<pad>=  value" lines as a table. */
  const mqConfig = (text: string): Record<string, string> => {
    const o: Record<string, string> = {};
    for (const l of text.split('\n')) {
      const at = l.indexOf('=  ');
      if (at > 0 && !l.startsWith('====')) o[l.slice(0, at).trim()] = l.slice(at + 3);
    }
    return o;
  };
  const committed = async (group: string): Promise<number[]> => {
    const offs: number[] = [];
    for (let q = 0; q < 4; q++) {
      const r = await admin.instance.invoke(addr, Operations.QUERY_CONSUMER_OFFSET, {
        consumerGroup: group,
        topic,
        queueId: q,
      });
      offs.push(r.code === 0 ? r.header.offset : -1);
    }
    return offs;
  };
  const consume = async (group: string, n: number, extra: Record<string, unknown> = {}) => {
    const seen = new Map<string, MessageExt>();
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: ns,
      subscriptions: { [topic]: '*' },
      consumeFromWhere: 'first',
      persistOffsetIntervalMs: 500,
      ...extra,
    });
    await c.start((msgs) => {
      for (const m of msgs) seen.set(m.msgId, m);
      return 'CONSUME_SUCCESS';
    });
    await until(
      () => seen.size >= n,
      () => `${n} consumed by ${group} (${seen.size})`,
      60_000,
    );
    return { c, seen };
  };

  // a producer online for producerConnection, and 20 messages consumed by the source group
  const producer = new Producer({ namesrvAddr: ns, group: 'rw_ops_pg' });
  await producer.start();
  t.teardown(() => producer.shutdown());
  for (let i = 0; i < 20; i++) await producer.send({ topic, body: `ops-${i}` });
  const src = await consume('rw_ops_src', 20);
  await until(async () => (await admin.consumerProgress('rw_ops_src', topic)).totalLag === 0, 'committed', 30_000);
  await src.c.shutdown();

  t.test('each command against mqadmin on the same broker', async (t) => {
    // rocketwire's writes, for mqadmin to see
    await admin.updateBrokerConfig({ maxMessageSize: '4194305' }, { brokerAddr: addr });
    // 5.3.3 takes UPDATE_CONSUMER_OFFSET (mqadmin's clone) only for a group it has a config of
    await admin.createGroup('rw_ops_dest_rw', {}, { brokerAddr: addr });
    await admin.createGroup('rw_ops_dest_java', {}, { brokerAddr: addr });
    await admin.cloneGroupOffset('rw_ops_src', 'rw_ops_dest_rw', topic, { offline: true });
    const rwWipe = await admin.wipeWritePerm(brokerName);
    const rwRouteWiped = await admin.topicRouteBrokers(topic);
    const rwAdd = await admin.addWritePerm(brokerName);
    // after the add, which sets every route of the broker to 6, as Java's name server does
    const perm4 = await cli('topic', 'perm', '--topic', permTopic, '--perm', '4', '--broker', addr);
    t.equal(perm4.code, 0, perm4.stderr);
    const rwConfig = (await admin.brokerConfig({ brokerAddr: addr }))[0]!.config;
    const rwProducers = await json<{ clients: Array<{ clientId: string; clientAddr: string; language: string }> }>(
      'producer',
      'connection',
      '--group',
      'rw_ops_pg',
      '--topic',
      topic,
    );

    const batch = await mqadminBatch(ns, [
      `getBrokerConfig -b ${addr}`,
      `producerConnection -g rw_ops_pg -t ${topic}`,
      `topicRoute -t ${permTopic}`,
      `wipeWritePerm -b ${brokerName}`,
      `topicRoute -t ${topic}`,
      `addWritePerm -b ${brokerName}`,
      `cloneGroupOffset -s rw_ops_src -d rw_ops_dest_java -t ${topic} -o true`,
      `updateTopicPerm -b ${addr} -t ${permTopic} -p 6`,
      `updateBrokerConfig -b ${addr} -k maxMessageSize -v 4194306`,
    ]);
    t.comment(`mqadmin in one JVM: ${batch.map((b) => `${b.command.split(' ')[0]} ${b.ms} ms`).join(', ')}`);

    const mq = mqConfig(out(batch, `getBrokerConfig -b ${addr}`));
    t.ok(Object.keys(mq).length > 100, `mqadmin printed ${Object.keys(mq).length} keys`);
    t.same(rwConfig, mq, 'broker config: the same keys and values');
    t.equal(mq.maxMessageSize, '4194305', "mqadmin sees rocketwire's update");

    const prodRows = out(batch, `producerConnection -g rw_ops_pg -t ${topic}`)
      .split('\n')
      .filter((l) => /^\d{4} /.test(l))
      .map((l) => l.trim().split(/\s+/));
    t.same(
      rwProducers.clients.map((c) => [c.clientId, c.clientAddr, c.language]),
      prodRows.map((r) => [r[1], r[2], r[3]]),
      'producer connection: client id, address, language',
    );

    const route = (text: string) =>
      JSON.parse(text.replace(/\{(\d+):/g, '{"$1":')) as { queueDatas: Array<{ perm: number }> };
    t.same(
      route(out(batch, `topicRoute -t ${permTopic}`)).queueDatas.map((q) => q.perm),
      [4],
      "mqadmin sees rocketwire's topic perm",
    );
    const wipeLine = /wipe write perm of broker\[(.+)\] in name server\[(.+)\] OK, (\d+)/.exec(
      out(batch, `wipeWritePerm -b ${brokerName}`),
    );
    t.same(
      rwWipe.map((w) => [brokerName, w.namesrvAddr, w.topicCount]),
      [[wipeLine?.[1], wipeLine?.[2], Number(wipeLine?.[3])]],
      'wipe: the same name server and topic count',
    );
    t.same(
      rwRouteWiped.map((b) => b.perm),
      [4],
      'rocketwire saw its wipe in the route',
    );
    t.same(
      route(out(batch, `topicRoute -t ${topic}`)).queueDatas.map((q) => q.perm),
      [4],
      "mqadmin's wipe seen in mqadmin's route",
    );
    const addLine = /add write perm of broker\[(.+)\] in name server\[(.+)\] OK, (\d+)/.exec(
      out(batch, `addWritePerm -b ${brokerName}`),
    );
    t.same(
      rwAdd.map((w) => [w.namesrvAddr, w.topicCount]),
      [[addLine?.[2], Number(addLine?.[3])]],
      'add: the same name server and topic count',
    );

    const srcOffsets = await committed('rw_ops_src');
    t.equal(
      srcOffsets.reduce((a, b) => a + b, 0),
      20,
    );
    t.same(await committed('rw_ops_dest_rw'), srcOffsets, "rocketwire's clone: the source group's offsets");
    t.same(
      await committed('rw_ops_dest_java'),
      srcOffsets,
      `mqadmin's clone: the same offsets (${out(batch, `cloneGroupOffset -s rw_ops_src -d rw_ops_dest_java -t ${topic} -o true`).slice(0, 300)})`,
    );

    t.same(
      (await admin.topicRouteBrokers(permTopic)).map((b) => b.perm),
      [6],
      "rocketwire sees mqadmin's topic perm",
    );
    t.same(
      (
        await json<Array<{ config: Record<string, string> }>>(
          'broker',
          'config',
          '--broker',
          addr,
          '--key',
          'maxMessageSize',
        )
      )[0]!.config,
      { maxMessageSize: '4194306' },
      "rocketwire sees mqadmin's config update",
    );
    const black = await cli('broker', 'update-config', '--broker', addr, '--key', 'brokerConfigPath', '--value', '/x');
    t.equal(black.code, 1);
    t.match(black.stderr, 'NO_PERMISSION: Can not update config in black list.');
  });

  t.test('skip: a backlog skipped by rocketwire, no lag in mqadmin consumerProgress', async (t) => {
    for (let i = 0; i < 8; i++) await producer.send({ topic, body: `backlog-${i}` });
    t.equal((await admin.consumerProgress('rw_ops_src', topic)).totalLag, 8);
    const r = await json<{ queues: Array<{ offset: number }> }>(
      'offset',
      'skip',
      '--group',
      'rw_ops_src',
      '--topic',
      topic,
    );
    t.equal(
      r.queues.reduce((a, q) => a + q.offset, 0),
      28,
    );
    const batch = await mqadminBatch(ns, [`consumerProgress -g rw_ops_src`]);
    const text = out(batch, 'consumerProgress -g rw_ops_src');
    const rows = mqadminRows(text, '#Topic').filter((row) => row[0] === topic);
    t.equal(rows.length, 4);
    t.match(text, /Diff Total:\s*0\b/, "mqadmin: the group's lag is 0");
  });

  t.test('consume-mode POP: the group then consumes by POP from the real broker', async (t) => {
    const r = await cli('group', 'consume-mode', '--group', 'rw_ops_pop', '--topic', topic, '--mode', 'POP');
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, `set consume mode to ${addr} success.`);
    // messages sent once the consumer runs, as a new POP group starts at the queue's end
    const { c, seen } = await consume('rw_ops_pop', 0, { clientRebalance: false });
    t.teardown(() => c.shutdown());
    for (let i = 0; i < 10; i++) await producer.send({ topic, body: `pop-${i}` });
    const pops = () => [...seen.values()].filter((m) => m.body.toString().startsWith('pop-'));
    await until(
      () => pops().length === 10,
      () => `10 popped (${pops().length})`,
      60_000,
    );
    t.ok(
      pops().every((m) => m.properties.POP_CK),
      'every message came by POP',
    );
    t.equal(c.stats().queues.filter((q) => q.topic === topic).length, 0, 'no queue pulled');
  });

  t.teardown(() => t.comment(`wall ${Date.now() - started} ms`));
}
