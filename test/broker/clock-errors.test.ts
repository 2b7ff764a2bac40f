import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { RocketwireError } from '../../protocol/index.js';
import {
  BrokerOptionError,
  ChannelExpiredError,
  MessageStore,
  NotAFolderError,
  StoreWriteError,
  startBroker,
} from '../../lib/broker/index.js';
import { ensureDir } from '../../lib/broker/atomic-file.js';
import { ManualClock } from '../../lib/clock.js';
import { socketAddressText } from '../../lib/broker/message-record.js';

t.test('the store writes its consume queues behind on the injected clock', async (t) => {
  const dir = t.testdir({});
  const clock = new ManualClock();
  const s = new MessageStore({ dir, storeHost: socketAddressText('127.0.0.1', 10911), clock, flushIntervalMs: 60_000 });
  s.open();
  t.teardown(() => s.close());
  const bornHost = socketAddressText('10.0.0.7:4567');
  const put = (body: string): string =>
    s.putMessages([
      {
        topic: 'T',
        queueId: 0,
        flag: 0,
        sysFlag: 0,
        bornTimestamp: 1,
        bornHost,
        reconsumeTimes: 0,
        preparedTransactionOffset: 0,
        body: Buffer.from(body),
        properties: {},
      },
    ]).status;
  t.equal(put('x'), 'PUT_OK');
  const checkpoint = path.join(dir, 'checkpoint.json');
  const dispatched = (): number => JSON.parse(fs.readFileSync(checkpoint, 'utf8')).dispatched;
  clock.advance(59_999);
  t.notOk(fs.existsSync(checkpoint), 'nothing written before the interval');
  clock.advance(1);
  t.ok(fs.existsSync(checkpoint), 'written once the clock reaches the interval');
  const first = dispatched();
  t.equal(clock.pending, 0, 'nothing written since: no flush waits on the clock');
  clock.advance(10_000);
  t.equal(put('y'), 'PUT_OK');
  t.equal(clock.pending, 1, 'a write schedules the next flush on the same clock');
  clock.advance(49_999);
  t.equal(dispatched(), first, 'not before the next tick of the interval');
  clock.advance(1);
  t.ok(dispatched() > first, 'at the tick an always-running flush would have had (120 s)');
  t.equal(clock.pending, 0);
});

t.test('broker errors are RocketwireErrors with stable names and fields', async (t) => {
  const store = new StoreWriteError('disk full', { code: 'ENOSPC' });
  t.ok(store instanceof RocketwireError);
  t.equal(store.name, 'StoreWriteError');
  t.equal(store.code, 'ENOSPC');

  const dir = t.testdir({ file: 'x' });
  const err = t.throws(() => ensureDir(path.join(dir, 'file'))) as NotAFolderError;
  t.ok(err instanceof NotAFolderError && err instanceof RocketwireError);
  t.equal(err.name, 'NotAFolderError');
  t.equal(err.path, path.join(dir, 'file'));

  await t.rejects(startBroker({ brokers: 0 }), BrokerOptionError);
  await t.rejects(startBroker({ brokers: 0 }), { name: 'BrokerOptionError', option: 'brokers' });
  await t.rejects(startBroker({ queues: 0 }), { name: 'BrokerOptionError', option: 'queues' });
  await t.rejects(startBroker({ segmentSize: 100 }), { name: 'BrokerOptionError', option: 'segmentSize' });

  const expired = new ChannelExpiredError('g', 'c1', 120_000);
  t.equal(expired.name, 'ChannelExpiredError');
  t.equal(expired.group, 'g');
  t.equal(expired.clientId, 'c1');
});

t.test('a broker refused for a bad option leaves no temporary folder behind', async (t) => {
  const tmp = t.testdir({});
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp; // os.tmpdir() reads it on every call
  t.teardown(() => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  });
  await t.rejects(startBroker({ idleTimeoutMs: -1 }), { name: 'BrokerOptionError', option: 'idleTimeoutMs' });
  await t.rejects(startBroker({ logger: 42 as never }), { name: 'BrokerOptionError', option: 'logger' });
  await t.rejects(startBroker({ segmentSize: 100 }), { name: 'BrokerOptionError', option: 'segmentSize' });
  t.same(fs.readdirSync(tmp), [], 'nothing made in the temporary folder');
  const b = await startBroker({});
  t.equal(path.dirname(b.dataDir), tmp, 'where a started broker keeps its store');
  await b.close();
  t.same(fs.readdirSync(tmp), [], 'and removes it on close');
});
