import { readFileSync } from 'node:fs';
import t from 'tap';
import { decodeMessages, decodeMessagesSkipping } from '../../protocol/internal.js';
import { consumerTouch, outputs, popAssign, type ShapeOutput } from './message-shapes.js';

// What JSON.stringify(msg), { ...msg } and Object.keys(msg) gave for received messages of every
// shape before decoding was lazy (see message-shapes.ts): the lazy messages must give the same.
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
