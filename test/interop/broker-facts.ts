/**
 * Wire facts checked on a real cluster of either version with raw frames (protocol/ codec only):
 * the answers rocketwire's client and embedded broker are written against. Used by
 * real-broker.test.ts (5.3.3) and real-broker-v4.test.ts (4.9.7); differences are spelled out here.
 */
import type { Test } from 'tap';
import {
  createRequest,
  decodeMessages,
  PullMessageRequestHeader,
  PullMessageResponseHeader,
  RequestCode,
  ResponseCode,
} from '../../protocol/index.js';
import { delay, type RealCluster } from './harness.js';
import { expectedBody, sha1, type JavaSent } from './java-client.js';

type Tap = Test;

function heartbeat(clientID: string, group: string, topic: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      clientID,
      consumerDataSet: [
        {
          consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
          consumeType: 'CONSUME_PASSIVELY',
          groupName: group,
          messageModel: 'CLUSTERING',
          subscriptionDataSet: [
            {
              classFilterMode: false,
              codeSet: [],
              expressionType: 'TAG',
              subString: '*',
              subVersion: Date.now(),
              tagsSet: [],
              topic,
            },
          ],
          unitMode: false,
        },
      ],
      producerDataSet: [],
    }),
  );
}

/** `topic` must exist on broker 0 with queue 0 empty. */
export async function checkBrokerFacts(t: Tap, cluster: RealCluster, topic: string): Promise<void> {
  const v5 = cluster.version.startsWith('5.');
  const broker = cluster.brokers[0]!;

  await t.test('unknown request codes', async (t) => {
    const res = await cluster.invoke(broker, createRequest(9999, { extFields: {} }));
    t.equal(res.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, 'broker: REQUEST_CODE_NOT_SUPPORTED');
    t.equal(res.remark, ' request type 9999 not supported', 'with the leading space');
    if (v5) {
      const ns = await cluster.invoke(cluster.namesrv, createRequest(9999, { extFields: {} }));
      t.equal(ns.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, '5.x name server: REQUEST_CODE_NOT_SUPPORTED');
    } else {
      // 4.9's name server routes unknown codes to its default processor, which returns nothing.
      const ns = await cluster
        .invoke(cluster.namesrv, createRequest(9999, { extFields: {} }), { timeoutMs: 1500 })
        .then(
          () => 'answered',
          () => 'no answer',
        );
      t.equal(ns, 'no answer', '4.9 name server: no answer at all');
    }
    const conn = cluster.connect(broker);
    t.teardown(() => conn.close());
    await conn.invokeOneway(createRequest(9999, {}));
    const after = await conn.invoke(createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic, queueId: '0' } }));
    t.equal(after.extFields?.offset, '0', 'the connection still works; an empty queue has max offset 0');
    t.same(conn.unmatchedResponses, [], 'a oneway request with an unknown code gets no answer');
  });

  await t.test('consumer group membership and NOTIFY_CONSUMER_IDS_CHANGED', async (t) => {
    const group = `facts_cg_${v5 ? 5 : 4}`;
    const missing = await cluster.invoke(
      broker,
      createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: group } }),
    );
    t.equal(missing.code, ResponseCode.SYSTEM_ERROR, 'no member yet: SYSTEM_ERROR');
    t.equal(missing.remark, `no consumer for this group, ${group}`);
    const retryBefore = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: `%RETRY%${group}` } }),
    );
    t.equal(retryBefore.code, ResponseCode.TOPIC_NOT_EXIST, 'the retry topic has no route before the first heartbeat');

    const a = cluster.connect(broker);
    const b = cluster.connect(broker);
    t.teardown(() => {
      a.close();
      return b.close();
    });
    await a.invoke(createRequest(RequestCode.HEART_BEAT, { body: heartbeat('127.0.0.1@A', group, topic) }));
    await b.invoke(createRequest(RequestCode.HEART_BEAT, { body: heartbeat('127.0.0.1@B', group, topic) }));
    const list = await a.invoke(
      createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: group } }),
    );
    t.same(JSON.parse(list.body!.toString()).consumerIdList.sort(), ['127.0.0.1@A', '127.0.0.1@B']);
    await delay(300);
    const notices = a.serverRequests.filter((r) => r.code === RequestCode.NOTIFY_CONSUMER_IDS_CHANGED);
    t.equal(notices.length, 2, 'the first member is notified of its own join and of the second');
    t.ok(
      notices.every((n) => n.flag === 2 && n.extFields?.consumerGroup === group),
      'oneway, header consumerGroup',
    );
    t.equal(
      b.serverRequests.filter((r) => r.code === RequestCode.NOTIFY_CONSUMER_IDS_CHANGED).length,
      1,
      'the second member: its own join',
    );
    b.close();
    const deadline = Date.now() + 5000;
    while (a.serverRequests.length < 3 && Date.now() < deadline) await delay(50);
    t.equal(a.serverRequests.length, 3, 'a member leaving (connection closed) notifies the rest');
    const left = await a.invoke(
      createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: group } }),
    );
    t.same(JSON.parse(left.body!.toString()), { consumerIdList: ['127.0.0.1@A'] });
    const retryAfter = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: `%RETRY%${group}` } }),
    );
    t.equal(retryAfter.code, ResponseCode.SUCCESS, 'the heartbeat created the retry topic ...');
    t.match(
      JSON.parse(retryAfter.body!.toString()).queueDatas,
      [{ readQueueNums: 1, writeQueueNums: 1, perm: 6 }],
      '... with one queue',
    );
  });

  await t.test('UPDATE_CONSUMER_OFFSET for an unknown group', async (t) => {
    const res = await cluster.invoke(
      broker,
      createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        extFields: { consumerGroup: 'never_seen_cg', topic, queueId: '0', commitOffset: '0' },
      }),
    );
    if (v5) {
      t.equal(res.code, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, '5.x checks the group (even with auto-create on)');
      t.equal(res.remark, 'Group never_seen_cg not exist!');
    } else {
      t.equal(res.code, ResponseCode.SUCCESS, '4.9 stores it without checking');
    }
  });
}

/**
 * Raw PULL_MESSAGE on queue 0 of `topic`, whose messages the Java producer sent (`sent`, bodies of
 * `size` bytes): protocol/'s decodeMessages reads the real stored records (CRC checked), and the
 * status table of docs/protocol-facts.md#pull-processing holds.
 */
export async function checkPullFacts(
  t: Tap,
  cluster: RealCluster,
  topic: string,
  sent: JavaSent[],
  size: number,
): Promise<void> {
  const v5 = cluster.version.startsWith('5.');
  const queue0 = sent.filter((s) => s.queueId === 0).sort((a, b) => a.queueOffset - b.queueOffset);
  const pull = (queueOffset: number, maxMsgNums = 32, queueId = 0) =>
    cluster.invoke(
      cluster.brokers[0]!,
      createRequest(RequestCode.PULL_MESSAGE, {
        extFields: PullMessageRequestHeader.encode({
          consumerGroup: 'raw_pull_cg',
          topic,
          queueId,
          queueOffset,
          maxMsgNums,
          // FLAG_SUBSCRIPTION: the group never sent a heartbeat, so the subscription rides along.
          sysFlag: 4,
          commitOffset: -1,
          suspendTimeoutMillis: 0,
          subscription: '*',
          subVersion: 0,
          expressionType: 'TAG',
        }),
      }),
    );

  await t.test('PULL_MESSAGE statuses and stored records', async (t) => {
    const found = await pull(0);
    t.equal(found.code, ResponseCode.SUCCESS);
    t.equal(found.remark, 'FOUND');
    const header = PullMessageResponseHeader.decode(found.extFields ?? {});
    t.match(header, {
      suggestWhichBrokerId: 0,
      minOffset: 0,
      maxOffset: queue0.length,
      nextBeginOffset: queue0.length,
    });
    t.equal(
      'topicSysFlag' in (found.extFields ?? {}),
      v5,
      v5 ? '5.x adds topicSysFlag/groupSysFlag' : '4.9 has no topicSysFlag',
    );
    const msgs = decodeMessages(found.body!, { verifyCrc: true });
    t.same(
      msgs.map((m) => [m.msgId, m.offsetMsgId, m.queueOffset, sha1(m.body)]),
      queue0.map((s) => [s.msgId, s.offsetMsgId, s.queueOffset, sha1(expectedBody(s.i, size))]),
      'ids, offsets and (decompressed) bodies of every record on queue 0',
    );
    t.ok(
      msgs.every((m) => m.storeHost === cluster.brokers[0] && m.topic === topic && m.queueId === 0),
      'store host = the broker address, topic, queue',
    );

    const two = await pull(0, 2);
    t.equal(decodeMessages(two.body!).length, 2, 'maxMsgNums caps the batch');
    t.equal(two.extFields?.nextBeginOffset, '2');

    const end = await pull(queue0.length);
    t.equal(end.code, ResponseCode.PULL_NOT_FOUND, 'caught up (no suspend flag): PULL_NOT_FOUND');
    t.equal(end.remark, 'OFFSET_OVERFLOW_ONE');
    const beyond = await pull(queue0.length + 100);
    t.equal(beyond.code, ResponseCode.PULL_OFFSET_MOVED, 'past the end: PULL_OFFSET_MOVED');
    t.equal(beyond.remark, 'OFFSET_OVERFLOW_BADLY');
    t.equal(beyond.extFields?.nextBeginOffset, String(queue0.length), '... suggesting the max offset');
    const bad = await pull(0, 32, 999);
    t.equal(bad.code, v5 ? ResponseCode.INVALID_PARAMETER : ResponseCode.SYSTEM_ERROR, 'queue id out of range');
    t.match(bad.remark, /queueId\[999\] is illegal/);
  });
}
