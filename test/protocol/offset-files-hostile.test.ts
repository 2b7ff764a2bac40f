// The offsets files round-trip whatever a group, topic or broker name holds (a regex over the
// text would read `evil,5:` as a queue id and lose every group's offsets).
import t from 'tap';
import {
  decodeConsumerOffsetFile,
  encodeConsumerOffsetFile,
  decodeDelayOffsetFile,
  encodeDelayOffsetFile,
} from '../../protocol/internal.js';
import { formatOffsetsFile, parseOffsetsFile } from '../../lib/consumer/core/offset-store.js';

const HOSTILE = [
  'evil,5:',
  'a"b',
  'x}{',
  '{0:1}',
  'k\\',
  'tab\there',
  'line\nbreak',
  'ünï\u2028cødé 😀',
  '"@"',
  ':',
  ',',
  '}',
  '0',
];

t.test('consumerOffset.json: hostile groups and topics round-trip and leave the other entries intact', async (t) => {
  const table = new Map<string, Map<number, number>>();
  table.set(
    'TopicTest@cg1',
    new Map([
      [0, 120],
      [1, 98],
    ]),
  );
  for (const [i, g] of HOSTILE.entries())
    table.set(
      `T${i}@${g}`,
      new Map([
        [0, i],
        [7, 2 ** 40 + i],
      ]),
    );
  table.set(`${HOSTILE[2]}@${HOSTILE[0]}`, new Map([[3, 4]]));
  const text = encodeConsumerOffsetFile({ offsetTable: table });
  t.same(decodeConsumerOffsetFile(text).offsetTable, table, 'every key and offset read back');
  const withVersion = encodeConsumerOffsetFile({
    offsetTable: table,
    dataVersion: { counter: 3, stateVersion: 0, timestamp: 1700000000000 },
  });
  t.same(decodeConsumerOffsetFile(withVersion).offsetTable, table, 'the 5.x layout too');
});

t.test('consumerOffset.json: damaged text is an error, never an empty table', async (t) => {
  const good = encodeConsumerOffsetFile({ offsetTable: new Map([['T@evil,5:', new Map([[0, 1]])]]) });
  for (const bad of [
    good.slice(0, -3),
    good.replace('0:1', '0:x'),
    'null',
    '[]',
    '{"offsetTable":{"T@g":{"a":1}}}',
    '{"offsetTable":{"T@g":{0:1.5}}}',
  ]) {
    t.throws(() => decodeConsumerOffsetFile(bad), { name: 'ProtocolError' }, JSON.stringify(bad.slice(0, 40)));
  }
});

t.test('delayOffset.json round-trips and refuses damage', async (t) => {
  const table = new Map([
    [1, 5],
    [18, 2 ** 45],
  ]);
  t.same(decodeDelayOffsetFile(encodeDelayOffsetFile(table)), table);
  t.throws(() => decodeDelayOffsetFile('{\n\t"offsetTable":{1:5,2:'), { name: 'ProtocolError' });
});

t.test('the consumer BROADCASTING offsets file: hostile names round-trip (no regex)', async (t) => {
  const entries = HOSTILE.map((n, i) => ({ mq: { topic: `T${i}`, brokerName: n, queueId: i }, offset: 10 + i }));
  entries.push({ mq: { topic: 'x}{"', brokerName: 'b', queueId: 0 }, offset: 2 ** 50 });
  const byTopic = (a: { mq: { topic: string } }, b: { mq: { topic: string } }): number =>
    a.mq.topic < b.mq.topic ? -1 : 1;
  const back = parseOffsetsFile(formatOffsetsFile(entries));
  t.same(
    [...back!].sort(byTopic),
    [...entries].sort(byTopic),
    'every entry read back (in any order: the keys are a hash map)',
  );
  t.equal(
    parseOffsetsFile('{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:'),
    null,
    'a cut file is unreadable, not empty',
  );
  t.equal(parseOffsetsFile('garbage'), null);
});
