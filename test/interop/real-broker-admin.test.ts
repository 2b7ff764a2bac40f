// `rocketwire admin` against a real Apache RocketMQ 5.3.3 cluster, each subcommand's
// facts compared with what Java's own mqadmin (MQAdminStartup of the tools jar) prints on the same
// cluster in the same test: broker names, addresses and versions, topic lists, queue counts and
// perm, min/max offsets, consumer offsets and lags, client ids, message ids, and offset resets and
// group writes made by one tool and seen by the other. The eighteen mqadmin commands run in one JVM
// (java/MqadminBatchClient.java), so the file pays one JVM start-up, not eighteen.
import t from 'tap';
import { ConsumeConcurrentlyStatus, PushConsumer } from '../../lib/consumer/index.js';
import { Producer, type SendResult } from '../../lib/producer/index.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';
import { until } from '../consumer/helpers.js';
import { startRealCluster, V53_VERSION, V5_VERSION } from './harness.js';
import { mqadminBatch, mqadminRows, type MqadminOutput } from './java-admin.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

if (await interopReady(t, [V5_VERSION])) {
  const started = Date.now();
  // DELETE_TOPIC_IN_BROKER of 5.3.3 reads the timer store's metrics and fails with a
  // NullPointerException (SYSTEM_ERROR) when the timer wheel is off, mqadmin's deleteTopic as ours
  const cluster = await startRealCluster({ version: V5_VERSION, brokerConfig: { timerWheelEnable: true } });
  t.teardown(() => cluster.stop({ graceful: false }));
  const ns = cluster.namesrv;
  const topic = 'AdmTopic';
  const group = 'rw_adm_cg';
  await cluster.createTopic(topic, { queues: 4 });
  await cluster.createTopic('AdmDoomed', { queues: 2 });

  // a generous timeout: GET_BROKER_RUNTIME_INFO of a busy 5.3.3 broker took over 3 s on a loaded machine
  const admin = (...args: string[]): Promise<CliRun> =>
    runCli(['admin', ...args, '--namesrv', ns, '--timeout', '10000']);
  async function json<T>(...args: string[]): Promise<T> {
    const r = await admin(...args, '--json');
    if (r.code !== 0) throw new Error(`rocketwire admin ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  }
  const out = (batch: MqadminOutput[], command: string): string => {
    const o = batch.find((b) => b.command === command);
    if (!o) throw new Error(`no mqadmin output for ${command}`);
    if (o.output.trim() === '') throw new Error(`mqadmin ${command} printed nothing; stderr: ${o.stderr}`);
    return o.output;
  };
  type Progress = {
    totalLag: number;
    queues: Array<{
      topic: string;
      brokerName: string;
      queueId: number;
      brokerOffset: number;
      consumerOffset: number;
      lag: number;
    }>;
  };

  const producer = new Producer({ namesrvAddr: ns, group: 'rw_adm_pg' });
  await producer.start();
  const sent: SendResult[] = [];
  for (let i = 0; i < 20; i++)
    sent.push(await producer.send({ topic, body: `adm-${i}`, keys: [`ik-${i % 4}`], tags: 'TagA' }));
  await producer.shutdown();
  let consumed = 0;
  // rebalancing every second, the group holds its retry queue soon after the broker has it
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: ns,
    consumeFromWhere: 'first',
    persistOffsetIntervalMs: 500,
    rebalanceIntervalMs: 1000,
  });
  consumer.subscribe(topic);
  await consumer.start((msgs) => {
    consumed += msgs.length;
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  t.teardown(() => consumer.shutdown());
  await until(() => consumed >= 20, '20 consumed', 60_000);
  await until(
    async () => (await json<Progress>('group', 'progress', '--group', group, '--topic', topic)).totalLag === 0,
    'offsets committed',
    30_000,
  );
  // The group's progress lists its retry queue once the consumer holds it and has committed its
  // offset: wait for that, or rocketwire's reads and mqadmin's below could fall either side of it.
  await until(
    async () =>
      (await json<Progress>('group', 'progress', '--group', group)).queues.some((q) => q.topic === `%RETRY%${group}`),
    'the retry queue held and committed',
    30_000,
  );
  // a second group, stopped: its offsets are reset by rocketwire, checked by mqadmin, and reset by mqadmin, checked by rocketwire
  const stopped = 'rw_adm_stopped';
  let stoppedConsumed = 0;
  const second = new PushConsumer({
    consumerGroup: stopped,
    namesrvAddr: ns,
    consumeFromWhere: 'first',
    persistOffsetIntervalMs: 500,
  });
  second.subscribe(topic);
  await second.start((msgs) => {
    stoppedConsumed += msgs.length;
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  await until(() => stoppedConsumed >= 20, '20 consumed by the second group', 60_000);
  await second.shutdown();
  // dead letters: a group that sends three messages straight to its DLQ, for `dlq resend`
  const dlqTopic = 'AdmDlqTopic';
  const dlqGroup = 'rw_adm_dlq';
  await cluster.createTopic(dlqTopic, { queues: 1 });
  const dlqProducer = new Producer({ namesrvAddr: ns, group: 'rw_adm_dlq_pg' });
  await dlqProducer.start();
  for (let i = 0; i < 3; i++) await dlqProducer.send({ topic: dlqTopic, body: `dead-${i}`, keys: ['dk'] });
  await dlqProducer.shutdown();
  let failed = 0;
  const dlqConsumer = new PushConsumer({ consumerGroup: dlqGroup, namesrvAddr: ns, consumeFromWhere: 'first' });
  dlqConsumer.subscribe(dlqTopic);
  await dlqConsumer.start((msgs, ctx) => {
    failed += msgs.length;
    ctx.delayLevelWhenNextConsume = -1;
    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
  });
  await until(() => failed >= 3, 'three messages failed', 60_000);
  await until(
    async () => {
      const r = await admin('topic', 'status', '--topic', `%DLQ%${dlqGroup}`, '--json');
      return (
        r.code === 0 &&
        (JSON.parse(r.stdout) as Array<{ maxOffset: number }>).reduce((a, q) => a + q.maxOffset, 0) === 3
      );
    },
    'three messages in the DLQ',
    30_000,
  );
  await dlqConsumer.shutdown();

  t.test(
    'a running group reset to its first offsets (INVOKE_BROKER_TO_RESET_OFFSET) consumes everything again',
    async (t) => {
      const r = await json<{ mode: string; queues: Array<{ offset: number }> }>(
        'offset',
        'reset',
        '--group',
        group,
        '--topic',
        topic,
        '--to',
        'first',
      );
      t.equal(r.mode, 'broker', '5.3.3 resets on the broker (useServerSideResetOffset)');
      t.same(
        r.queues.map((q) => q.offset),
        [0, 0, 0, 0],
      );
      // the broker answers each queue's next pull with PULL_OFFSET_MOVED; the consumer moves back
      await until(() => consumed >= 40, 'all 20 consumed again', 60_000);
      await until(
        async () => (await json<Progress>('group', 'progress', '--group', group, '--topic', topic)).totalLag === 0,
        'committed again',
        30_000,
      );
    },
  );

  t.test(
    'every subcommand against mqadmin on the same cluster: reads compared, writes seen by the other tool',
    async (t) => {
      const uniq = sent[5]!;
      const at = sent[6]!;
      // rocketwire's writes first, for mqadmin to see
      const made = await admin('topic', 'create', '--topic', 'AdmMade', '--read-queues', '3', '--write-queues', '3');
      t.equal(made.code, 0, made.stderr);
      const upd = await admin('topic', 'update', '--topic', 'AdmMade', '--perm', '4', '--write-queues', '2');
      t.equal(upd.code, 0, upd.stderr);
      const del = await admin('topic', 'delete', '--topic', 'AdmDoomed');
      t.equal(del.code, 0, del.stderr);
      const g = await admin('group', 'create', '--group', 'rw_adm_made', '--retry-max-times', '5');
      t.equal(g.code, 0, g.stderr);
      const resent = await json<{ read: number; resent: Record<string, number> }>('dlq', 'resend', '--group', dlqGroup);
      t.same([resent.read, resent.resent], [3, { [dlqTopic]: 3 }], 'dlq resend: three read, three sent to their topic');
      const reset = await json<{ mode: string; queues: Array<{ offset: number }> }>(
        'offset',
        'reset',
        '--group',
        stopped,
        '--topic',
        topic,
        '--to',
        'first',
      );
      t.same(
        [reset.mode, reset.queues.map((q) => q.offset)],
        ['broker', [0, 0, 0, 0]],
        'a stopped group is reset on the broker too',
      );

      // rocketwire's reads, then mqadmin's (reads, then its writes) in one JVM
      const rw = await Promise.all([
        json<Array<{ brokerName: string; brokerId: number; addr: string; version: string; clusterName: string }>>(
          'cluster',
        ),
        json<string[]>('topic', 'list'),
        json<
          Array<{
            brokerName: string;
            readQueueNums: number;
            writeQueueNums: number;
            perm: number;
            addrs: Record<string, string>;
          }>
        >('topic', 'route', '--topic', topic),
        json<Array<{ brokerName: string; queueId: number; minOffset: number; maxOffset: number }>>(
          'topic',
          'status',
          '--topic',
          topic,
        ),
        json<Progress>('group', 'progress', '--group', group),
        json<{
          clients: Array<{ clientId: string; language: string; clientAddr: string }>;
          subscriptionTable: Record<string, unknown>;
          consumeType: string;
          messageModel: string;
          consumeFromWhere: string;
        }>('group', 'connection', '--group', group),
        json<Array<{ clientId: string; info: { properties: Record<string, string>; mqTable: unknown[] } }>>(
          'group',
          'status',
          '--group',
          group,
        ),
        json<Array<{ msgId: string; offsetMsgId: string; body: string; queueOffset: number }>>(
          'message',
          'id',
          '--id',
          uniq.msgId,
          '--topic',
          topic,
        ),
        json<Array<{ msgId: string; queueId: number; queueOffset: number }>>(
          'message',
          'key',
          '--topic',
          topic,
          '--key',
          'ik-1',
        ),
        json<Array<{ msgId: string; offsetMsgId: string; body: string }>>(
          'message',
          'offset',
          '--topic',
          topic,
          '--broker',
          at.messageQueue.brokerName,
          '--queue',
          String(at.messageQueue.queueId),
          '--offset',
          String(at.queueOffset),
        ),
      ]);
      const [rwCluster, rwTopics, rwRoute, rwStatus, rwProgress, rwConn, rwStatusInfo, rwById, rwByKey, rwByOffset] =
        rw;
      const batch = await mqadminBatch(ns, [
        // topicList first: the JVM's first command also pays for loading the tools' classes
        'topicList',
        'clusterList',
        `topicRoute -t ${topic}`,
        `topicStatus -t ${topic}`,
        `consumerProgress -g ${group}`,
        `consumerConnection -g ${group}`,
        `consumerStatus -g ${group} -i ${consumer.clientId}`,
        `queryMsgById -t ${topic} -i ${uniq.msgId}`,
        `queryMsgByKey -t ${topic} -k ik-1`,
        `queryMsgByOffset -t ${topic} -b ${at.messageQueue.brokerName} -i ${at.messageQueue.queueId} -o ${at.queueOffset}`,
        'topicRoute -t AdmMade',
        'getConsumerConfig -g rw_adm_made',
        `consumerProgress -g ${stopped}`,
        `resetOffsetByTime -g ${stopped} -t ${topic} -s now`,
        `topicStatus -t %DLQ%${dlqGroup}`,
        `queryMsgByKey -t ${dlqTopic} -k dk`,
        'updateSubGroup -c DefaultCluster -g rw_adm_java -r 7',
        'deleteSubGroup -c DefaultCluster -g rw_adm_made',
      ]);
      t.comment(`mqadmin in one JVM: ${batch.map((b) => `${b.command.split(' ')[0]} ${b.ms} ms`).join(', ')}`);

      const clusterRows = mqadminRows(out(batch, 'clusterList'), '#Cluster Name');
      t.same(
        rwCluster.map((b) => [b.clusterName, b.brokerName, String(b.brokerId), b.addr, b.version]),
        clusterRows.map((r) => r.slice(0, 5)),
        'cluster: name, broker, id, address, version',
      );
      t.equal(rwCluster[0]?.version, `V${V5_VERSION.replaceAll('.', '_')}`);

      const mqTopics = out(batch, 'topicList')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.includes(' '))
        .sort();
      t.same(rwTopics, mqTopics, 'topic list: the same topics');
      t.notOk(mqTopics.includes('AdmDoomed'), 'mqadmin does not list the topic rocketwire deleted');
      t.ok(mqTopics.includes('AdmMade'));

      // mqadmin prints the route as fastjson does: brokerAddrs' numeric keys unquoted; 5.5.0's
      // fastjson2 pretty-prints it, so a key follows a newline and tabs ({\n\t\t\t\t0:"…")
      const route = (text: string) =>
        JSON.parse(text.replace(/([{,]\s*)(\d+):/g, '$1"$2":')) as {
          queueDatas: Array<{ brokerName: string; readQueueNums: number; writeQueueNums: number; perm: number }>;
          brokerDatas: Array<{ brokerAddrs: Record<string, string> }>;
        };
      const mqRoute = route(out(batch, `topicRoute -t ${topic}`));
      t.same(
        rwRoute.map((b) => [b.brokerName, b.readQueueNums, b.writeQueueNums, b.perm]),
        mqRoute.queueDatas.map((q) => [q.brokerName, q.readQueueNums, q.writeQueueNums, q.perm]),
        'route: queue counts and perm',
      );
      t.same(
        rwRoute.map((b) => b.addrs),
        mqRoute.brokerDatas.map((b) => b.brokerAddrs),
        'route: addresses',
      );
      t.same(
        route(out(batch, 'topicRoute -t AdmMade')).queueDatas.map((q) => [q.readQueueNums, q.writeQueueNums, q.perm]),
        [[3, 2, 4]],
        'mqadmin sees the topic rocketwire created and updated',
      );

      const statusRows = mqadminRows(out(batch, `topicStatus -t ${topic}`), '#Broker Name');
      t.same(
        rwStatus.map((q) => [q.brokerName, String(q.queueId), String(q.minOffset), String(q.maxOffset)]),
        statusRows.map((r) => r.slice(0, 4)),
        'status: min and max offset of every queue',
      );
      t.equal(
        rwStatus.reduce((a, q) => a + q.maxOffset, 0),
        20,
      );

      const progress = out(batch, `consumerProgress -g ${group}`);
      const progressRows = mqadminRows(progress, '#Topic').map((r) => [r[0], r[1], r[2], r[3], r[4], r[5]]);
      t.same(
        rwProgress.queues.map((q) => [
          q.topic,
          q.brokerName,
          String(q.queueId),
          String(q.brokerOffset),
          String(q.consumerOffset),
          String(q.lag),
        ]),
        progressRows,
        'progress: broker offset, consumer offset and diff of every queue',
      );
      t.equal(`Consume Diff Total: ${rwProgress.totalLag}`, /Consume Diff Total: \d+/.exec(progress)?.[0]);
      t.match(
        out(batch, `consumerProgress -g ${stopped}`),
        /Consume Diff Total: 20\b/,
        "mqadmin sees rocketwire's reset of the stopped group (all 20 to consume again)",
      );

      const connection = out(batch, `consumerConnection -g ${group}`);
      const connRows = mqadminRows(connection, '#ClientId');
      t.same(
        rwConn.clients.map((c) => [c.clientId, c.clientAddr, c.language]),
        connRows.map((r) => r.slice(0, 3)),
        'connection: client id, address and language',
      );
      t.same(
        rwConn.clients.map((c) => c.clientId),
        [consumer.clientId],
      );
      for (const k of ['consumeType', 'messageModel', 'consumeFromWhere'] as const) {
        t.match(connection, new RegExp(`${k[0]!.toUpperCase()}${k.slice(1)}: ${rwConn[k]}`), `connection: ${k}`);
      }
      const mqStatus = out(batch, `consumerStatus -g ${group} -i ${consumer.clientId}`);
      t.same(
        rwStatusInfo.map((x) => x.clientId),
        [consumer.clientId],
      );
      t.match(
        mqStatus,
        new RegExp(`PROP_CONSUME_TYPE\\s*:\\s*${rwStatusInfo[0]!.info.properties.PROP_CONSUME_TYPE}`),
        'status: the consume type mqadmin reads',
      );
      t.match(
        mqStatus,
        new RegExp(`PROP_CLIENT_VERSION\\s*:\\s*${rwStatusInfo[0]!.info.properties.PROP_CLIENT_VERSION}`),
      );

      const byId = out(batch, `queryMsgById -t ${topic} -i ${uniq.msgId}`);
      t.same(
        rwById.map((m) => [m.offsetMsgId, m.body]),
        [[/OffsetID:\s+(\S+)/.exec(byId)?.[1], 'adm-5']],
        'by id: the same stored message',
      );
      const keyIds = mqadminRows(out(batch, `queryMsgByKey -t ${topic} -k ik-1`), '#Message ID')
        .map((r) => r[0])
        .sort();
      t.same(rwByKey.map((m) => m.msgId).sort(), keyIds, 'by key: the same message ids');
      t.equal(keyIds.length, 5);
      const byOffset = out(
        batch,
        `queryMsgByOffset -t ${topic} -b ${at.messageQueue.brokerName} -i ${at.messageQueue.queueId} -o ${at.queueOffset}`,
      );
      t.same(
        rwByOffset.map((m) => [m.offsetMsgId, m.body]),
        [[/OffsetID:\s+(\S+)/.exec(byOffset)?.[1], 'adm-6']],
        'by offset: the same message',
      );

      const dlqRows = mqadminRows(out(batch, `topicStatus -t %DLQ%${dlqGroup}`), '#Broker Name');
      t.equal(
        dlqRows.reduce((a, r) => a + Number(r[3]), 0),
        3,
        'mqadmin: the DLQ keeps its three messages',
      );
      const dlqKeyRows = mqadminRows(out(batch, `queryMsgByKey -t ${dlqTopic} -k dk`), '#Message ID');
      t.equal(
        dlqKeyRows.length,
        6,
        'mqadmin finds each dead letter twice in its topic: the original and the one dlq resend sent',
      );
      t.match(
        out(batch, 'getConsumerConfig -g rw_adm_made'),
        /retryMaxTimes\s+=\s+5/,
        'mqadmin sees the group rocketwire made',
      );
      t.equal(
        (await json<Progress>('group', 'progress', '--group', stopped, '--topic', topic)).totalLag,
        0,
        "rocketwire sees mqadmin's resetOffsetByTime",
      );
      const groups = await json<Array<{ groupName: string; retryMaxTimes: number }>>('group', 'list');
      t.equal(
        groups.find((x) => x.groupName === 'rw_adm_java')?.retryMaxTimes,
        7,
        "rocketwire lists mqadmin's new group",
      );
      const deleted = groups.find((x) => x.groupName === 'rw_adm_made');
      if (V5_VERSION === V53_VERSION) {
        t.equal(deleted, undefined, 'and not the one mqadmin deleted');
      } else {
        // 5.5.0's DELETE_SUBSCRIPTIONGROUP asks LiteMetadataUtil.isLiteGroupType about the group just
        // removed, whose findSubscriptionGroupConfig creates it again (autoCreateSubscriptionGroup):
        // the group stays, with the defaults instead of the retryMaxTimes 5 rocketwire gave it
        t.equal(deleted?.retryMaxTimes, 16, `${V5_VERSION} re-creates the group mqadmin deleted, with the defaults`);
      }
    },
  );

  t.test('bad input on the real broker: one line naming the topic or group, exit 1', async (t) => {
    const a = await admin('topic', 'status', '--topic', 'NoSuchAdmTopic');
    t.same([a.code, a.stderr], [1, 'rocketwire admin: unknown topic NoSuchAdmTopic\n']);
    const b = await admin('group', 'progress', '--group', 'no_such_adm_group');
    t.same(
      [b.code, b.stderr],
      [1, 'rocketwire admin: unknown consumer group no_such_adm_group (no broker has its retry topic)\n'],
    );
    const c = await admin('offset', 'reset', '--group', 'no_such_adm_group', '--topic', topic, '--to', 'first');
    t.same([c.code, c.stderr], [1, 'rocketwire admin: unknown consumer group no_such_adm_group\n']);
    t.comment(`file wall time so far ${Date.now() - started} ms`);
  });
}
