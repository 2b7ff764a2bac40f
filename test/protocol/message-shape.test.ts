import { readFileSync } from 'node:fs';
import t from 'tap';
import { decodeMessages, decodeMessagesSkipping, encodeStoredMessage } from '../../protocol/internal.js';
import { consumerTouch, outputs, popAssign, type ShapeOutput } from './message-shapes.js';

// What JSON.stringify(msg), { ...msg } and Object.keys(msg) give for received messages of every
// shape, as the fixture recorded them (see message-shapes.ts): a decoder change must not move them.
const expected = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/message-shapes/expected.json', import.meta.url), 'utf8'),
) as Record<string, { hex: string; outputs: ShapeOutput[] }>;

const TOUCHED = ', as the push consumer hands it over';

for (const [name, { hex, outputs: want }] of Object.entries(expected)) {
  t.test(name, async (t) => {
    const body = Buffer.from(hex, 'hex');
    for (const how of ['decodeMessages', 'decodeMessagesSkipping'] as const) {
      const msgs = how === 'decodeMessages' ? decodeMessages(body) : decodeMessagesSkipping(body).messages;
      if (name === 'POP with extra info') popAssign(msgs);
      if (name.endsWith(TOUCHED)) consumerTouch(msgs);
      t.same(outputs(msgs), want, `${how}: stringify, spread and keys as before`);
    }
  });
}

t.test('keys: KEYS split on spaces, empty pieces dropped, whatever the spacing', async (t) => {
  const cases: [string, string[]][] = [
    ['a', ['a']],
    ['a b', ['a', 'b']],
    [' a', ['a']],
    ['a ', ['a']],
    ['a  b', ['a', 'b']],
    [' ', []],
    ['', []],
  ];
  for (const [k, want] of cases) {
    const [m] = decodeMessages(
      encodeStoredMessage({
        topic: 'T',
        queueId: 0,
        queueOffset: 0,
        commitLogOffset: 0,
        bornTimestamp: 0,
        bornHost: '127.0.0.1:1',
        storeTimestamp: 0,
        storeHost: '127.0.0.1:2',
        body: Buffer.alloc(0),
        properties: k === '' ? '' : `KEYS\u0001${k}`,
      }),
    );
    t.same(m!.keys, want, JSON.stringify(k));
  }
});
