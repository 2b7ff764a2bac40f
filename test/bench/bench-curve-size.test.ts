// The body-size curve (rocketwire bench --curve size) end to end on the embedded broker, rocketwire
// only and few messages: every point's messages are all consumed, MB/s and the floor are there,
// and the JSON report has the fields the docs table is built from.
import { Writable } from 'node:stream';
import t from 'tap';
import { command } from '../../bench/harness/command.js';
import { floorChunk, SIZE_RULE, sizePointMessages, type SizePoint } from '../../bench/harness/curve-size.js';
import { withBroker } from '../support/embedded-broker.js';

function collect(): { io: Parameters<typeof command.run>[1]; text: () => string } {
  let out = '';
  const stdout = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const stderr = new Writable({ write: (_c, _e, done) => done() });
  return { io: { stdin: process.stdin, stdout, stderr }, text: () => out };
}

t.test('the documented rule: about 256 MiB of bodies, 2 000 to 200 000 messages, never over 256 MiB', async (t) => {
  const n = [128, 1024, 16_384, 65_536, 1024 * 1024, 4 * 1024 * 1024].map((s) => sizePointMessages(s, SIZE_RULE));
  t.same(n, [200_000, 200_000, 16_384, 4096, 256, 64]);
  t.same(
    [128, 65_536, 4 * 1024 * 1024].map(floorChunk),
    [4096, 256 * 1024, 4 * 1024 * 1024],
    'the floor writes a pull answer at a time: 32 messages, at most 256 KiB past the first',
  );
});

t.test(
  '--curve size --points 128,65536 --json: every message consumed, MB/s and the floor at each point',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const { io, text } = collect();
    const argv = ['--namesrv', broker.namesrv, '--curve', 'size', '--points', '128,65536'];
    const code = await command.run([...argv, '--point-mib', '1', '--point-messages', '64,1000', '--json'], io);
    t.equal(code, 0);
    const report = JSON.parse(text()) as {
      axis: string;
      compress: boolean;
      points: SizePoint[];
      targets: { aboveFloorMeanUs: number; ofFloorAt1MiB: number | null; atOrAboveJava: boolean | null };
    };
    t.equal(report.axis, 'size');
    t.equal(report.compress, true, 'compressed by default, as the producer is');
    t.same(
      report.points.map((p) => [p.size, p.messages, p.rocketwire.received, p.rocketwire.complete, p.compressed]),
      [
        [128, 1000, 1000, true, false],
        [65_536, 64, 64, true, true],
      ],
      '1 MiB of bodies a point within 64..1000 messages, every one consumed; 64 KiB bodies go compressed',
    );
    for (const p of report.points) {
      t.ok(p.rocketwire.mbPerSec > 0 && p.rocketwire.msgsPerSec > 0, `${p.size}: MB/s ${p.rocketwire.mbPerSec}`);
      t.ok(p.floor.mbPerSec > 0, `${p.size}: floor MB/s ${p.floor.mbPerSec}`);
      t.equal(p.floor.bytes, p.messages * p.size, `${p.size}: the floor moves the same body bytes`);
      t.ok(p.rocketwire.cpuUsPerMsg > 0 && p.floor.cpuUsPerMib >= 0, `${p.size}: CPU figures`);
      t.ok(Number.isFinite(p.ofFloor) && Number.isFinite(p.cpuAboveFloorUsPerMsg), `${p.size}: the ratios`);
      t.equal(p.java, undefined, 'no Java without --vs java');
    }
    t.ok(Number.isFinite(report.targets.aboveFloorMeanUs));
    t.equal(report.targets.ofFloorAt1MiB, null, 'no 1 MiB point in this run');
    t.equal(report.targets.atOrAboveJava, null);

    const table = collect();
    t.equal(await command.run([...argv, '--point-mib', '1', '--point-messages', '32,32'], table.io), 0);
    const lines = table.text().split('\n');
    t.match(lines[2]!, /^\| 128 B \| 32 \| /);
    t.match(lines[3]!, /^\| 64 KiB \(zlib\) \| 32 \| /);
    t.match(table.text(), /CPU above the floor, 128 B – 64 KiB: mean/);
  },
);

t.test('--curve size refuses a bad --point-messages before it starts anything', async (t) => {
  const { io } = collect();
  await t.rejects(command.run(['--curve', 'size', '--point-messages', '5'], io), {
    name: 'UsageError',
    message: /MIN,MAX/,
  });
  await t.rejects(command.run(['--curve', 'size', '--points', '4'], io), { name: 'UsageError', message: /--points/ });
});
