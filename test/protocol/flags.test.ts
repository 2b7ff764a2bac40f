import t from 'tap';
import {
  buildPullSysFlag,
  clearCommitOffsetFlag,
  DELAY_LEVELS_MS,
  delayLevelMs,
  perm2String,
  PermName,
  ProtocolError,
  PullSysFlag,
} from '../../protocol/index.js';
import { formatIPv6, parseIPv6, parseSocketAddress } from '../../protocol/socket-address.js';

t.test('pull sysFlag of the push consumer is 2 or 3', async (t) => {
  t.equal(buildPullSysFlag(true, true, false), 3);
  t.equal(buildPullSysFlag(false, true, false), 2);
  t.equal(buildPullSysFlag(false, true, true), PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_SUBSCRIPTION);
  t.equal(clearCommitOffsetFlag(3), 2);
});

t.test('perm and delay levels', async (t) => {
  t.equal(PermName.PERM_READ | PermName.PERM_WRITE, 6);
  t.equal(perm2String(6), 'RW-');
  t.equal(DELAY_LEVELS_MS.length, 18);
  t.equal(delayLevelMs(3), 10_000);
  t.equal(delayLevelMs(18), 7_200_000);
  t.equal(delayLevelMs(99), 7_200_000, 'clamped to the maximum');
  t.equal(delayLevelMs(0), 0);
});

t.test('socket addresses', async (t) => {
  t.same(parseSocketAddress('/10.0.0.1:10911'), { ip: Uint8Array.from([10, 0, 0, 1]), port: 10911 });
  t.same(parseSocketAddress('localhost/127.0.0.1:1').port, 1);
  for (const text of [
    '::',
    '::1',
    '2001:db8::1',
    'fe80::1:0:0:1',
    '1:2:3:4:5:6:7:8',
    '::ffff:1.2.3.4',
    '2001:db8:0:0:1::1',
  ]) {
    const b = parseIPv6(text)!;
    t.ok(b, text);
    t.same(parseIPv6(formatIPv6(b, 0)), b, `${text} round trip`);
  }
  t.equal(
    formatIPv6(parseIPv6('2001:0db8:0000:0000:0001:0000:0000:0001')!, 0),
    '2001:db8::1:0:0:1',
    'RFC 5952 picks the first longest run',
  );
  for (const bad of ['1.2.3.4', '1.2.3.256:1', '[::1]', '[::1]:x', ':::1:5', '1::2::3:4', 'a:b']) {
    t.throws(() => parseSocketAddress(bad), ProtocolError, bad);
  }
});
