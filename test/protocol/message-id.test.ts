import t from 'tap';
import {
  createOffsetMsgId,
  createUniqKey,
  decodeOffsetMsgId,
  ProtocolError,
  UniqKeyGenerator,
} from '../../protocol/index.js';

t.test('offset msgId of the fact sheet', async (t) => {
  t.equal(createOffsetMsgId('192.168.1.20:10911', 0x1234), 'C0A8011400002A9F0000000000001234');
  t.same(decodeOffsetMsgId('C0A8011400002A9F0000000000001234'), {
    storeHost: '192.168.1.20:10911',
    commitLogOffset: 0x1234,
  });
  const v6 = createOffsetMsgId('[2001:db8::5]:10911', 2 ** 40);
  t.equal(v6.length, 56);
  t.same(decodeOffsetMsgId(v6), { storeHost: '[2001:db8::5]:10911', commitLogOffset: 2 ** 40 });
  t.same(decodeOffsetMsgId(v6.toLowerCase()).commitLogOffset, 2 ** 40, 'lower case accepted');
});

t.test('bad offset ids are ProtocolErrors', async (t) => {
  for (const id of [
    '',
    'XYZ',
    'C0A8011400002A9F000000000000123',
    'G0A8011400002A9F0000000000001234',
    'C0A8011400002A9F7FFFFFFFFFFFFFFF',
  ]) {
    t.throws(() => decodeOffsetMsgId(id), ProtocolError, id);
  }
});

t.test('UNIQ_KEY layout: IP, pid, hash, ms since month start, counter', async (t) => {
  const g = new UniqKeyGenerator({ ip: '192.168.1.10', pid: 0x3039, instanceHash: 0x18b4aac2 });
  const d = new Date(2024, 3, 5, 12, 0, 0, 250); // local time, 4 days 12 h after the month started
  const now = d.getTime();
  const a = g.next(now);
  const b = g.next(now);
  t.equal(a.length, 32);
  t.equal(a.slice(0, 20), 'C0A8010A303918B4AAC2');
  const since = now - new Date(2024, 3, 1).getTime();
  t.equal(parseInt(a.slice(20, 28), 16), since);
  t.equal((parseInt(b.slice(28), 16) - parseInt(a.slice(28), 16)) & 0xffff, 1, 'counter increments');
  t.match(createUniqKey(), /^[0-9A-F]{32}$/);
  t.not(createUniqKey(), createUniqKey());
  t.match(createUniqKey('::1'), /^[0-9A-F]{56}$/);
});
