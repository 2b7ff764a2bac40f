import t from 'tap';
import {
  decodeConsumerListBody,
  decodeConsumerOffsetFile,
  encodeConsumerOffsetFile,
  decodeHeartbeatData,
  decodeLockBatchBody,
  decodeLockBatchResponseBody,
  decodeResetOffsetBody,
  decodeTopicRouteData,
  encodeConsumerListBody,
  encodeHeartbeatData,
  encodeLockBatchBody,
  encodeLockBatchResponseBody,
  encodeResetOffsetBody,
  encodeTopicRouteData,
  parseFastjson,
} from '../../protocol/index.js';
import { loadVectors, VECTOR_VERSIONS, type BodyVector } from './vectors-fixtures.js';

// JSON bodies written by Java's RemotingSerializable.toJson (fastjson 1.2.69 in 4.9.8, 1.2.83 in
// 5.3.3, fastjson2 2.0.59 in 5.5.0) and, for the route, with the name server's standard-JSON
// features. We read each one and write it back: byte for byte where Java's output is deterministic
// (sorted bean fields), by round trip where Java walks a HashMap of object keys.
//
// fastjson2's PrettyFormat (5.5.0) puts every array element and every map entry on its own line
// ("cg1":[\n\t\t\t"%RETRY%cg1",…], {\n\t\t\t0:120,…}) where fastjson 1 wrote them inline. Our
// encoders write the fastjson 1 layout, which every release reads (the broker reads the file with
// JSON.parseObject, whitespace-blind); for 5.5.0 the pretty files are checked by what they decode to.

for (const version of VECTOR_VERSIONS) {
  const v5 = version.startsWith('5');
  /** fastjson2 (5.5+) lays out PrettyFormat differently from fastjson 1 (see the top of this file). */
  const fastjson2 = v5 && version !== '5.3.3';
  const bodies = new Map(loadVectors<BodyVector[]>(version, 'bodies.json').map((b) => [b.name, b]));
  const get = (name: string): BodyVector => {
    const b = bodies.get(name);
    if (!b) throw new Error(`no body vector ${name} for ${version}`);
    return b;
  };
  const bytes = (b: BodyVector): Buffer => Buffer.from(b.hex, 'hex');

  t.test(`${version}: parseFastjson reads every body, standard or not`, async (t) => {
    t.ok(bodies.size >= 10);
    for (const b of bodies.values()) {
      const parsed = parseFastjson(b.text);
      t.ok(parsed !== null && typeof parsed === 'object', `${b.name} parses`);
      // Object keys ({{…}:42) and unquoted numeric keys ({0:120) are fastjson's own; whitespace may
      // stand between (fastjson2's PrettyFormat puts each on its own line).
      if (!/\{\s*\{/.test(b.text) && !/[{,]\s*\d+:/.test(b.text))
        t.same(parsed, JSON.parse(b.text), `${b.name} as standard JSON`);
    }
    // object keys become their JSON text; numeric keys their digits
    const reset = parseFastjson(get('reset-offset-body').text) as { offsetTable: Record<string, number> };
    t.same(Object.values(reset.offsetTable).sort(), [100, 200]);
    const plain = parseFastjson(get('topic-route-data-plain').text);
    t.same(plain, JSON.parse(get('topic-route-data-standard').text), 'unquoted broker ids read like quoted ones');
    const stats = parseFastjson(get('consume-stats').text) as { consumeTps: number };
    t.equal(stats.consumeTps, 1.5);
  });

  t.test(`${version}: HeartbeatData`, async (t) => {
    const b = get('heartbeat-data');
    const hb = decodeHeartbeatData(bytes(b));
    t.equal(hb.clientID, '192.168.1.10@12345#1712345678901234');
    t.equal(hb.consumerDataSet[0]!.subscriptionDataSet[0]!.codeSet[0], 2598919);
    t.same(hb.consumerDataSet[0]!.subscriptionDataSet[0]!.tagsSet, ['TagA', 'TagB']);
    t.equal(hb.heartbeatFingerprint, v5 ? 0 : undefined, '5.x adds heartbeatFingerprint');
    t.equal(hb.withoutSub, v5 ? false : undefined, '5.x adds withoutSub');
    t.equal(encodeHeartbeatData(hb).toString('utf8'), b.text, 'encodes back to Java bytes');
  });

  t.test(`${version}: TopicRouteData standard and plain`, async (t) => {
    const std = get('topic-route-data-standard');
    const plain = get('topic-route-data-plain');
    const route = decodeTopicRouteData(bytes(std));
    t.same(decodeTopicRouteData(bytes(plain)), route, 'both forms decode alike');
    t.same(route.brokerDatas[0]!.brokerAddrs, { '0': '192.168.1.20:10911', '1': '192.168.1.21:10911' });
    t.equal(route.brokerDatas[1]!.cluster, '\u96c6\u7fa4');
    t.equal(route.queueDatas[1]!.perm, 4);
    t.equal(
      encodeTopicRouteData(route, { v5 }).toString('utf8'),
      std.text,
      'standard form, non-ASCII as upper-case \\u escapes',
    );
    t.equal(
      encodeTopicRouteData(route, { v5, nonStandard: true }).toString('utf8'),
      plain.text,
      'plain form, unquoted ids',
    );
  });

  t.test(`${version}: consumer list, lock and unlock bodies`, async (t) => {
    const cl = get('consumer-list');
    const list = decodeConsumerListBody(bytes(cl));
    t.equal(list.consumerIdList.length, 2);
    t.equal(encodeConsumerListBody(list).toString('utf8'), cl.text);

    for (const name of ['lock-batch-request', 'unlock-batch-request']) {
      const b = get(name);
      const body = decodeLockBatchBody(bytes(b));
      t.equal(body.consumerGroup, 'cg1');
      t.equal(body.onlyThisBroker, v5 ? false : undefined, `${name}: onlyThisBroker only in 5.x`);
      t.equal(encodeLockBatchBody(body).toString('utf8'), b.text, `${name} encodes back`);
    }
    const lr = get('lock-batch-response');
    const resp = decodeLockBatchResponseBody(bytes(lr));
    t.same(resp.lockOKMQSet, [{ brokerName: 'broker-a', queueId: 0, topic: 'TopicTest' }]);
    t.equal(encodeLockBatchResponseBody(resp).toString('utf8'), lr.text);
  });

  t.test(`${version}: ResetOffsetBody with MessageQueue keys`, async (t) => {
    const b = get('reset-offset-body');
    const body = decodeResetOffsetBody(bytes(b));
    const byQueue = new Map(body.offsetTable.map(([mq, off]) => [`${mq.topic}/${mq.brokerName}/${mq.queueId}`, off]));
    const want = (b.fields as { offsetTable: { brokerName: string; queueId: number; topic: string; offset: number }[] })
      .offsetTable;
    t.equal(byQueue.size, want.length);
    for (const w of want) t.equal(byQueue.get(`${w.topic}/${w.brokerName}/${w.queueId}`), w.offset);
    // Java walks its HashMap; we write a defined order. Both must read back the same table.
    const again = decodeResetOffsetBody(encodeResetOffsetBody(body));
    t.same(new Map(again.offsetTable.map(([mq, off]) => [`${mq.topic}/${mq.brokerName}/${mq.queueId}`, off])), byQueue);
    t.match(
      encodeResetOffsetBody(body).toString('utf8'),
      /^\{"offsetTable":\{\{"brokerName":"broker-a","queueId":\d,"topic":"TopicTest"\}:\d+,/,
    );
  });

  t.test(`${version}: the broker's consumerOffset.json and a client's offsets.json`, async (t) => {
    const b = get('consumer-offset-file');
    const file = decodeConsumerOffsetFile(b.text);
    t.same(
      [...file.offsetTable.get('TopicTest@cg1')!.entries()],
      [
        [0, 120],
        [1, 98],
        [17, 5000000000],
      ],
    );
    t.same([...file.offsetTable.get('%RETRY%cg1@cg1')!.entries()], [[0, 0]]);
    if (v5) t.same(file.dataVersion, { counter: 3, stateVersion: 0, timestamp: 1712345600000 });
    else t.equal(file.dataVersion, undefined);
    const ours = encodeConsumerOffsetFile(file);
    // 5.x: fastjson writes the derived groupTopicMap's arrays inline ("cg1":["%RETRY%cg1","TopicTest"]), in HashSet order.
    if (fastjson2) {
      // 5.5.0 also writes its (empty) pullOffsetTable, the pull offsets ConsumerOffsetManager keeps
      // beside the commit offsets; fastjson 1 left it out. rocketwire's broker has no such table.
      const { pullOffsetTable, ...java } = parseFastjson(b.text) as Record<string, unknown>;
      t.same(pullOffsetTable, {}, '5.5.0 adds an empty pullOffsetTable');
      t.same(parseFastjson(ours), java, "encodes to what Java's file holds (fastjson 1 layout, see above)");
    } else t.equal(ours, b.text, 'encodes back to the bytes Java writes');
    t.same(decodeConsumerOffsetFile(ours), file, 'and reads back the same');

    const w = get('offset-serialize-wrapper');
    const parsed = parseFastjson(w.text) as { offsetTable: Record<string, number> };
    t.same(Object.values(parsed.offsetTable), [42]);
    t.same(
      JSON.parse(Object.keys(parsed.offsetTable)[0]!),
      { brokerName: 'broker-a', queueId: 0, topic: 'TopicTest' },
      'a pretty-printed MessageQueue key reads as its JSON text',
    );
  });
}
