import t from 'tap';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, parseFastjson, RequestCode } from '../../protocol/internal.js';
import { produce, uniqueName, until, withBroker } from './helpers.js';

t.test(
  'GET_CONSUMER_RUNNING_INFO (relayed by the broker) and CONSUME_MESSAGE_DIRECTLY (RESET_CONSUMER_CLIENT_OFFSET: consumer-status.test.ts)',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 50, (i) => ({ body: `m${i}`, tags: 'TagA' }));
    const seen: MessageExt[] = [];
    const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    c.subscribe(topic, 'TagA || TagB');
    await c.start((msgs) => {
      seen.push(...msgs);
      if (msgs[0]!.body.toString() === 'quiet') return undefined;
      return msgs[0]!.body.toString() === 'boom'
        ? ConsumeConcurrentlyStatus.RECONSUME_LATER
        : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    t.teardown(() => c.shutdown());
    await until(() => seen.length === 50, 'all consumed');

    const admin = new RemotingClient();
    t.teardown(() => admin.close());
    const res = await admin.invoke(
      broker.broker,
      createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, {
        extFields: { consumerGroup: group, clientId: c.clientId, jstackEnable: 'false' },
      }),
      { timeoutMs: 5000 },
    );
    t.equal(res.code, 0, res.remark ?? '');
    const info = parseFastjson(res.body!.toString('utf8')) as {
      mqTable: Record<string, { cachedMsgCount: number; commitOffset: number }>;
      properties: Record<string, string>;
      subscriptionSet: { topic: string; subString: string; tagsSet: string[] }[];
      statusTable: Record<string, { consumeOKTPS: number }>;
    };
    t.equal(info.properties.consumerGroup, group);
    t.equal(info.properties.PROP_CONSUME_TYPE, 'CONSUME_PASSIVELY');
    t.equal(info.properties.consumeThreadMin, '20');
    const sub = info.subscriptionSet.find((s) => s.topic === topic)!;
    t.same(sub.tagsSet, ['TagA', 'TagB']);
    t.ok(
      info.subscriptionSet.some((s) => s.topic === `%RETRY%${group}`),
      'retry topic subscribed',
    );
    const entries = Object.entries(info.mqTable).map(([k, v]) => ({
      mq: JSON.parse(k) as { topic: string; brokerName: string; queueId: number },
      v,
    }));
    t.equal(
      entries.filter((e) => e.mq.topic === topic).length,
      4,
      'one mqTable entry per held queue, MessageQueue objects as keys',
    );
    t.equal(
      entries.filter((e) => e.mq.topic === topic).reduce((a, e) => a + Math.max(0, e.v.commitOffset), 0),
      50,
      'commit offsets',
    );
    t.ok(info.statusTable[topic], 'status per topic');

    const direct = await pushConsumerImpl(c).consumeMessageDirectly(
      { ...seen[0]!, body: Buffer.from('boom'), properties: { ...seen[0]!.properties } },
      'broker-a',
    );
    t.match(direct, { autoCommit: true, consumeResult: 'CR_LATER', order: false });
    const ok = await pushConsumerImpl(c).consumeMessageDirectly(
      { ...seen[0]!, properties: { ...seen[0]!.properties } },
      'broker-a',
    );
    t.equal(ok.consumeResult, 'CR_SUCCESS');
    const quiet = await pushConsumerImpl(c).consumeMessageDirectly(
      { ...seen[0]!, body: Buffer.from('quiet'), properties: { ...seen[0]!.properties } },
      'broker-a',
    );
    t.equal(
      quiet.consumeResult,
      'CR_SUCCESS',
      'a handler returning nothing is CR_SUCCESS (the handler rule; Java reports CR_RETURN_NULL)',
    );
  },
);
