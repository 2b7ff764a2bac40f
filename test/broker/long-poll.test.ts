import t from 'tap';
import { ResponseCode } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { client, decode, ext, pullRequest, sendRequest } from './helpers.js';
import { until } from '../support/until.js';

t.test('a held pull is answered with its own opaque as soon as a message arrives', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  const producer = client();
  t.teardown(() => c.close());
  t.teardown(() => producer.close());
  await producer.invoke(b.broker, sendRequest('Hold', 'first'));
  const req = pullRequest('Hold', { offset: 1, sysFlag: 2 | 4, suspendMs: 20000 });
  let settled = false;
  const pending = c.invoke(b.broker, req, { timeoutMs: 30000 }).finally(() => (settled = true));
  await until(() => b.instances[0]!.pullHold.size === 1, 'the pull to be parked', 3000);
  t.equal(settled, false, 'no answer while nothing is there');
  await producer.invoke(b.broker, sendRequest('Hold', 'second'));
  const res = await pending;
  t.equal(res.opaque, req.opaque, 'same opaque');
  t.equal(res.code, ResponseCode.SUCCESS);
  t.same(
    decode(res).map((m) => m.body.toString()),
    ['second'],
  );
  t.equal(ext(res, 'nextBeginOffset'), '2');
  t.equal(b.instances[0]!.pullHold.size, 0);
});

t.test('a held pull with a tag filter waits for a matching tag', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  const producer = client();
  t.teardown(() => producer.close());
  await producer.invoke(b.broker, sendRequest('HoldTag', 'a', { tags: 'A' }));
  const pending = c.invoke(b.broker, pullRequest('HoldTag', { offset: 1, sysFlag: 2 | 4, subscription: 'B' }), {
    timeoutMs: 30000,
  });
  await until(() => b.instances[0]!.pullHold.size === 1, 'the pull to be parked', 3000);
  await producer.invoke(b.broker, sendRequest('HoldTag', 'not-b', { tags: 'A' }));
  t.equal(b.instances[0]!.pullHold.size, 1, 'a non-matching tag does not wake it');
  await producer.invoke(b.broker, sendRequest('HoldTag', 'b', { tags: 'B' }));
  const res = await pending;
  t.equal(res.code, ResponseCode.SUCCESS);
  t.same(
    decode(res).map((m) => m.body.toString()),
    ['b'],
  );
  t.equal(ext(res, 'nextBeginOffset'), '3');
});

t.test('expiry answers PULL_NOT_FOUND with nextBeginOffset = queueOffset; no park without FLAG_SUSPEND', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  await c.invoke(b.broker, sendRequest('Expire', 'x'));
  const noSuspend = await c.invoke(b.broker, pullRequest('Expire', { offset: 1, sysFlag: 4 }));
  t.equal(noSuspend.code, ResponseCode.PULL_NOT_FOUND, 'answered at once without FLAG_SUSPEND');
  t.equal(noSuspend.remark, 'OFFSET_OVERFLOW_ONE');
  const req = pullRequest('Expire', { offset: 1, sysFlag: 1 | 2 | 4, suspendMs: 1000, commitOffset: 1, group: 'g' });
  const pending = c.invoke(b.broker, req, { timeoutMs: 30000 });
  await until(() => b.instances[0]!.pullHold.size === 1, 'the pull to be parked', 3000);
  t.equal(b.instances[0]!.offsets.query('g', 'Expire', 0), 1, 'the piggyback is stored when the request is parked');
  clock.advance(999);
  t.equal(b.instances[0]!.pullHold.size, 1, 'still held before its suspend time');
  clock.advance(1);
  const res = await pending;
  t.equal(res.opaque, req.opaque);
  t.equal(res.code, ResponseCode.PULL_NOT_FOUND);
  t.equal(res.remark, 'OFFSET_OVERFLOW_ONE');
  t.equal(ext(res, 'nextBeginOffset'), '1');
  t.equal(b.instances[0]!.pullHold.size, 0, 'the re-run did not park again');
});

t.test('a closed connection drops its held pulls', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  await c.invoke(b.broker, sendRequest('Drop', 'x'));
  const pending = c
    .invoke(b.broker, pullRequest('Drop', { offset: 1, sysFlag: 2 | 4 }), { timeoutMs: 30000 })
    .catch((e: Error) => e);
  await until(() => b.instances[0]!.pullHold.size === 1, 'the pull to be parked', 3000);
  await c.close();
  await pending;
  await until(() => b.instances[0]!.pullHold.size === 0, 'the held pull to be dropped', 3000);
  t.pass('dropped');
});

t.test('with the real clock a short suspendTimeoutMillis ends the hold', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  await c.invoke(b.broker, sendRequest('Short', 'x'));
  const res = await c.invoke(b.broker, pullRequest('Short', { offset: 1, sysFlag: 2 | 4, suspendMs: 50 }), {
    timeoutMs: 10000,
  });
  t.equal(res.code, ResponseCode.PULL_NOT_FOUND);
  t.equal(ext(res, 'nextBeginOffset'), '1');
  t.equal(b.instances[0]!.pullHold.size, 0);
});
