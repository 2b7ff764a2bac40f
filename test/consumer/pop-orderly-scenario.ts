import type { Test } from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { until } from '../support/until.js';

// The proof of orderly POP mode, run on the embedded broker (test/consumer/pop-orderly.test.ts) and
// on the real Apache 5.3.3 broker (test/interop/real-broker-pop-orderly.test.ts): messages sent
// with a key selector are handled strictly in order per key by two orderly push consumers of one
// group switched to POP, one handler failure mid-stream included; nothing is lost.

export interface Handled {
  key: string;
  seq: number;
  consumer: number;
  reconsumeTimes: number;
  popCk: string | undefined;
  /** Date.now() when the handler got it (reported, never asserted). */
  at: number;
}

export interface ScenarioResult {
  handled: Handled[];
  consumers: PushConsumer<true>[];
}

/** Keys × perKey messages "key:seq", each key on one queue (hash of the key), the delivery of FAIL_AT failing once. */
export async function runOrderlyPopScenario(
  t: Test,
  o: {
    namesrv: string;
    topic: string;
    group: string;
    keys: number;
    perKey: number;
    failKey: string;
    failSeq: number;
    limitMs: number;
    extra?: Record<string, unknown>;
  },
): Promise<ScenarioResult> {
  const handled: Handled[] = [];
  let failed = false;
  const consumers: PushConsumer<true>[] = [];
  for (const n of [0, 1]) {
    const c = new PushConsumer({
      consumerGroup: o.group,
      namesrvAddr: o.namesrv,
      subscriptions: { [o.topic]: '*' },
      consumeFromWhere: 'first',
      clientRebalance: false,
      orderly: true,
      popBatchNums: 4,
      popInvisibleTimeMs: 30_000,
      instanceName: `order-pop-${n}-${process.pid}`,
      ...o.extra,
    }) as PushConsumer<true>;
    await c.start(async (msgs: MessageExt[]) => {
      for (const m of msgs) {
        const [key, seq] = m.body.toString().split(':') as [string, string];
        handled.push({
          key,
          seq: Number(seq),
          consumer: n,
          reconsumeTimes: m.reconsumeTimes,
          popCk: m.properties.POP_CK,
          at: Date.now(),
        });
        // yield, so the other consumer's handler calls interleave with this one's
        await new Promise((resolve) => setImmediate(resolve));
        if (!failed && key === o.failKey && Number(seq) === o.failSeq) {
          failed = true;
          throw new Error('handler failure mid-stream');
        }
      }
      return 'SUCCESS';
    });
    t.teardown(() => c.shutdown());
    consumers.push(c);
  }
  const producer = new Producer({ namesrvAddr: o.namesrv, group: `${o.group}_pg` });
  await producer.start();
  t.teardown(() => producer.shutdown());
  const hash = (s: string): number => [...s].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7);
  for (let seq = 0; seq < o.perKey; seq++)
    for (let k = 0; k < o.keys; k++) {
      const key = `k${k}`;
      await producer.send(
        { topic: o.topic, body: `${key}:${seq}`, keys: key },
        { selector: (qs, _m, arg) => qs[hash(String(arg)) % qs.length]!, arg: key },
      );
    }
  const total = o.keys * o.perKey;
  await until(
    () => new Set(handled.map((h) => `${h.key}:${h.seq}`)).size === total && failed,
    () => `all ${total} handled (${new Set(handled.map((h) => `${h.key}:${h.seq}`)).size} so far)`,
    o.limitMs,
  );
  return { handled, consumers };
}

/** Asserts strict order per key: 0..perKey−1, the failed one twice in a row (the second with reconsumeTimes 1), nothing else twice. */
export function assertOrderedPerKey(
  t: Test,
  r: ScenarioResult,
  o: { keys: number; perKey: number; failKey: string; failSeq: number },
): void {
  for (let k = 0; k < o.keys; k++) {
    const key = `k${k}`;
    const seqs = r.handled.filter((h) => h.key === key).map((h) => h.seq);
    const want = [...Array(o.perKey).keys()];
    if (key === o.failKey) want.splice(o.failSeq, 0, o.failSeq);
    t.same(
      seqs,
      want,
      `${key}: handled in order${key === o.failKey ? ', the failed one again before anything after it' : ''}`,
    );
  }
  const again = r.handled.filter((h) => h.key === o.failKey && h.seq === o.failSeq);
  t.same(
    again.map((h) => h.reconsumeTimes),
    [0, 1],
    "the redelivery counts one earlier delivery (the broker's orderCountInfo)",
  );
  if (again.length === 2) t.comment(`the failed message came back ${again[1]!.at - again[0]!.at} ms after its failure`);
  t.ok(
    r.handled.every((h) => h.popCk?.split(' ')[3] === '999'),
    'every delivery came by order pop (receipt handles with reviveQid 999)',
  );
  t.same([...new Set(r.handled.map((h) => h.consumer))].sort(), [0, 1], 'both consumers of the group handled messages');
}
