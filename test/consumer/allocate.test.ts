import { readFileSync } from 'node:fs';
import t from 'tap';
import { compareMessageQueue } from '../../protocol/index.js';
import {
  allocateAveragely,
  allocateAveragelyByCircle,
  allocateByConfig,
  allocateConsistentHash,
  consistentHashMd5,
  messageQueue,
  messageQueueToString,
  resolveAllocateStrategy,
  type AllocateMessageQueueStrategy,
} from '../../lib/consumer/index.js';

interface Vector {
  strategy: string;
  queues: number;
  clients: number;
  cid: string;
  result: [string, number][];
}

// Produced by test/consumer/fixtures/GenAllocate.java with rocketmq-client 4.9.8's own strategy classes.
const vectors = JSON.parse(
  readFileSync(new URL('../../../test/consumer/fixtures/allocate-java-4.9.8.json', import.meta.url), 'utf8'),
) as Vector[];

function shape(queues: number, clients: number) {
  const brokers = ['broker-a', 'broker-b'];
  const mqAll = Array.from({ length: queues }, (_, q) =>
    messageQueue('TopicTest', brokers[q % 2]!, Math.floor(q / 2)),
  ).sort(compareMessageQueue);
  const cids = Array.from(
    { length: clients },
    (_, c) => `192.168.0.${10 + c}@${1000 + c}#${987654321 * (c + 1)}`,
  ).sort();
  return { mqAll, cids };
}

const strategies: Record<string, AllocateMessageQueueStrategy> = {
  AVG: allocateAveragely,
  AVG_BY_CIRCLE: allocateAveragelyByCircle,
  CONSISTENT_HASH: allocateConsistentHash(10),
};

t.test("every strategy gives the Java client's result for the same inputs", async (t) => {
  t.ok(vectors.length >= 60, 'vectors loaded');
  for (const v of vectors) {
    const { mqAll, cids } = shape(v.queues, v.clients);
    const got = strategies[v.strategy]!.allocate('cg1', v.cid, mqAll, cids).map((mq) => [mq.brokerName, mq.queueId]);
    t.same(got, v.result, `${v.strategy} ${v.queues} queues / ${v.clients} clients, ${v.cid}`);
  }
});

t.test('each queue goes to exactly one member for every strategy', async (t) => {
  for (const [name, s] of Object.entries(strategies)) {
    for (const [n, c] of [
      [8, 3],
      [3, 5],
      [16, 16],
      [1, 1],
    ] as const) {
      const { mqAll, cids } = shape(n, c);
      const owners = new Map<string, number>();
      for (const cid of cids)
        for (const mq of s.allocate('g', cid, mqAll, cids))
          owners.set(messageQueueToString(mq), (owners.get(messageQueueToString(mq)) ?? 0) + 1);
      t.equal(owners.size, n, `${name} ${n}/${c}: all queues owned`);
      t.ok(
        [...owners.values()].every((x) => x === 1),
        `${name} ${n}/${c}: no queue owned twice`,
      );
    }
  }
});

t.test('a client not in the list, or empty inputs, get nothing', async (t) => {
  const { mqAll, cids } = shape(4, 2);
  for (const s of Object.values(strategies)) {
    t.same(s.allocate('g', 'stranger', mqAll, cids), []);
    t.same(s.allocate('g', cids[0]!, [], cids), []);
    t.same(s.allocate('g', cids[0]!, mqAll, []), []);
  }
});

t.test('consistent hash uses the first 4 MD5 bytes of the Java toString key', async (t) => {
  // md5("MessageQueue [topic=T, brokerName=b, queueId=0]") computed independently with Python's hashlib.
  t.equal(messageQueueToString(messageQueue('T', 'b', 0)), 'MessageQueue [topic=T, brokerName=b, queueId=0]');
  t.equal(consistentHashMd5('abc'), 0x90015098, 'md5("abc") starts 900150983cd24fb0');
});

t.test('by config returns the configured queues; resolve accepts names, functions and objects', async (t) => {
  const fixed = [messageQueue('T', 'b', 3)];
  t.same(allocateByConfig(fixed).allocate('g', 'x', [], []), fixed);
  t.equal(resolveAllocateStrategy('AVG'), allocateAveragely);
  t.equal(resolveAllocateStrategy('CONSISTENT_HASH')?.name, 'CONSISTENT_HASH');
  t.same(resolveAllocateStrategy({ config: fixed })?.allocate('g', 'x', [], []), fixed);
  const fn = () => fixed;
  t.same(resolveAllocateStrategy(fn)?.allocate('g', 'x', [], []), fixed);
  t.equal(resolveAllocateStrategy('NOPE' as 'AVG'), null);
});
