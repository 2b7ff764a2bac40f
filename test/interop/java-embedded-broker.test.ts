// The stock Java client (5.3.3 and 4.9.7 jars) against rocketwire's embedded name server and broker
// (lib/broker startBroker): the Java producer sends, the Java push consumer receives everything
// intact, and the Java admin API reads the committed offsets back.
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { V4_VERSION, V5_VERSION } from './harness.js';
import { expectedBody, javaOffsets, javaProduce, sha1, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

const versions = [V5_VERSION, V4_VERSION];

if (await interopReady(t, versions)) {
  const broker = await startBroker({ queues: 4 });
  t.teardown(() => broker.close());

  for (const version of versions) {
    t.test(`Java ${version} client ↔ rocketwire embedded broker`, async (t) => {
      const topic = `JavaOnEmbedded_${version.replace(/\./g, '_')}`;
      const group = `java_on_embedded_cg_${version.replace(/\./g, '_')}`;
      const count = 50;
      const size = 6000;
      // The topic is auto-created by the first send (TBW102), so produce before subscribing.
      const { sent } = await javaProduce({
        version,
        namesrv: broker.namesrv,
        topic,
        count,
        size,
        tag: 'E',
        keys: 'ek-{i}',
        props: { via: 'embedded' },
      });
      t.equal(sent.length, count, 'the Java producer got SEND_OK for every message');
      t.equal(new Set(sent.map((s) => s.queueId)).size, 4, 'over the 4 auto-created queues');

      const { summary, messages } = await (
        await startJavaConsumer({
          version,
          namesrv: broker.namesrv,
          topic,
          group,
          expect: count,
          timeoutMs: 60_000,
          from: 'first',
        })
      ).done;
      t.equal(summary.received, count, 'the Java push consumer received every message');
      const byId = new Map(messages.map((m) => [m.msgId, m]));
      const bad = sent.filter((s) => {
        const m = byId.get(s.msgId);
        return (
          !m ||
          m.bodySha1 !== sha1(expectedBody(s.i, size)) ||
          m.tags !== 'E' ||
          m.keys !== `ek-${s.i}` ||
          m.properties.via !== 'embedded' ||
          m.queueId !== s.queueId ||
          m.queueOffset !== s.queueOffset ||
          m.offsetMsgId !== s.offsetMsgId
        );
      });
      t.same(
        bad.map((s) => s.i),
        [],
        'body, tag, keys, property, position and offset msgId as sent',
      );

      const progress = await javaOffsets({ version, namesrv: broker.namesrv, group, topic });
      t.equal(progress.error, undefined, 'the admin API read the consumer progress');
      t.equal(progress.queues.length, 4);
      t.equal(
        progress.queues.reduce((n, q) => n + q.brokerOffset, 0),
        count,
        'broker offsets add up',
      );
      t.equal(progress.diffTotal, 0, 'everything committed');

      const pinned = await javaProduce({ version, namesrv: broker.namesrv, topic, count: 5, queue: 2 });
      t.same(
        pinned.sent.map((s) => s.queueId),
        [2, 2, 2, 2, 2],
        'a send to one chosen queue lands there',
      );
    });
  }
}
