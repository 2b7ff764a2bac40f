// rocketwire produce --compress-type / --compress-level: the codec and level reach the wire, and a
// bad value (or ZSTD on a Node.js without it) is one usage line naming the option.
import t, { type Test } from 'tap';
import { zstdCompressionAvailable } from '../../protocol/compression-encode.js';
import { lz4FrameDecompress } from '../../protocol/lz4-frame.js';
import { runCli } from '../cli/run-in-process.js';
import { routeJson, startFakeBroker, startFakeNameServer } from '../client/fake-cluster.js';

async function cluster(t: Test) {
  const broker = await startFakeBroker();
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await broker.close();
  });
  return { ns: ns.addr, broker };
}

t.test('--compress-type lz4: generated bodies go as LZ4 frames (sysFlag 0x101)', async (t) => {
  const { ns, broker } = await cluster(t);
  const r = await runCli([
    'produce',
    '--namesrv',
    ns,
    '--topic',
    'TopicTest',
    '--size',
    '8000',
    '--compress-type',
    'lz4',
  ]);
  t.equal(r.code, 0, r.stderr);
  const req = broker.stored[0]!;
  t.equal(req.extFields!.f, String(0x101));
  t.equal(lz4FrameDecompress(req.body!).length, 8000);
});

t.test('bad values are usage errors naming the option', async (t) => {
  const { ns } = await cluster(t);
  const run = (...extra: string[]) =>
    runCli(['produce', '--namesrv', ns, '--topic', 'TopicTest', '--body', 'x', ...extra]);
  const level = await run('--compress-level', '12');
  t.equal(level.code, 2);
  t.match(level.stderr, /compressLevel: must be an integer between 0 and 9, got 12/);
  const type = await run('--compress-type', 'snappy');
  t.equal(type.code, 2);
  t.match(type.stderr, /compressType: must be ZLIB, LZ4 or ZSTD/);
  if (!zstdCompressionAvailable()) {
    const zstd = await run('--compress-type', 'zstd');
    t.equal(zstd.code, 2);
    t.match(zstd.stderr, /ZSTD needs node:zlib's zstd, which Node\.js 22\.15 or 23\.8 and later have/);
  }
});
