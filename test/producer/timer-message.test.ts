import t from 'tap';
import { MessageValidationError } from '../../lib/producer/errors.js';
import { messageProperties } from '../../lib/producer/message-encoding.js';
import type { Message } from '../../lib/producer/message.js';

// delayMs / deliverAt put the properties Java's setDelayTimeMs / setDeliverTimeMs put, checked up front.
t.test('properties', async (t) => {
  t.equal(messageProperties({ topic: 'T', body: 'x', delayMs: 3000 }, undefined).TIMER_DELAY_MS, '3000');
  t.equal(
    messageProperties({ topic: 'T', body: 'x', deliverAt: 1_700_000_003_000 }, undefined).TIMER_DELIVER_MS,
    '1700000003000',
  );
  t.equal(
    messageProperties({ topic: 'T', body: 'x', deliverAt: new Date(5000) }, undefined).TIMER_DELIVER_MS,
    '5000',
    'a past Date is sent as is',
  );
  t.equal(
    messageProperties({ topic: 'T', body: 'x', delayMs: 0 }, undefined).TIMER_DELAY_MS,
    undefined,
    '0 sends at once',
  );
  t.equal(
    messageProperties({ topic: 'T', body: 'x', properties: { TIMER_DELAY_SEC: '3' } }, undefined).TIMER_DELAY_SEC,
    '3',
    'a raw TIMER_DELAY_SEC passes, as in Java',
  );
});

t.test('bad values name the field', async (t) => {
  const bad: Array<[Partial<Message>, string]> = [
    [{ delayMs: -1 }, 'delayMs'],
    [{ delayMs: 1.5 }, 'delayMs'],
    [{ delayMs: '10' as unknown as number }, 'delayMs'],
    [{ deliverAt: Number.NaN }, 'deliverAt'],
    [{ deliverAt: new Date('nope') }, 'deliverAt'],
    [{ delayMs: 10, deliverAt: 10 }, 'deliverAt'],
    [{ delayMs: 10, delayTimeLevel: 2 }, 'delayMs'],
    [{ deliverAt: 10, properties: { TIMER_DELIVER_MS: '5' } }, 'deliverAt'],
  ];
  for (const [extra, field] of bad) {
    t.equal(
      caught(() => messageProperties({ topic: 'T', body: 'x', ...extra }, undefined)),
      field,
      JSON.stringify(extra),
    );
  }
});

function caught(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof MessageValidationError) return e.field;
    throw e;
  }
  return undefined;
}
