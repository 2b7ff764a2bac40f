import t from 'tap';
import { encodeStoredMessage } from '../../protocol/index.js';
import { LatencyHistogram } from '../../bench/harness/histogram.js';
import { PhaseRecorder, walkRecords } from '../../bench/harness/latency-record.js';

/** A latency-bench body: phase, sequence, scheduled send time in µs, filler. */
function body(phase: number, seq: number, sentUs: number, size = 64): Buffer {
  const b = Buffer.alloc(size, 'x');
  b.writeUInt32BE(phase, 0);
  b.writeUInt32BE(seq, 4);
  b.writeUInt32BE(Math.floor(sentUs / 0x1_0000_0000), 8);
  b.writeUInt32BE(sentUs >>> 0, 12);
  return b;
}

function stored(b: Buffer, storeTimestamp: number, bornHost: string, storeHost: string, queueOffset: number): Buffer {
  return encodeStoredMessage({
    topic: 'T',
    queueId: 0,
    queueOffset,
    commitLogOffset: queueOffset * 1000,
    bornTimestamp: storeTimestamp - 1,
    bornHost,
    storeTimestamp,
    storeHost,
    body: b,
    properties: { KEYS: 'k', TAGS: 'bench' },
  });
}

t.test('the floor reads each record’s body timestamp and store time, IPv4 and IPv6 hosts alike', async (t) => {
  const sent = 1_764_000_000_000_000; // µs since the epoch
  const pull = Buffer.concat([
    stored(body(3, 0, sent), sent / 1000 + 1, '127.0.0.1:40000', '127.0.0.1:10911', 0),
    stored(body(3, 1, sent + 500), sent / 1000 + 2, '[::1]:40000', '127.0.0.1:10911', 1),
    stored(body(3, 2, sent + 1000), sent / 1000 + 3, '127.0.0.1:40000', '[fe80::1]:10911', 2),
    stored(body(4, 0, sent), sent / 1000 + 4, '[::1]:40000', '[::1]:10911', 3),
  ]);
  const rec = new PhaseRecorder();
  const now = sent + 5000; // 5 ms after the first scheduled send
  walkRecords(pull, 0, pull.length, rec, now);
  const p3 = rec.figures(3);
  t.equal(p3.count, 3, 'three messages of phase 3');
  t.equal(rec.figures(4).count, 1, 'one of phase 4');
  t.ok(Math.abs(p3.send.max - 5) < 0.02, `send → handler max is 5 ms (${p3.send.max})`);
  t.ok(Math.abs(p3.send.p50 - 4.5) < 0.02, `send → handler p50 is 4.5 ms (${p3.send.p50})`);
  t.ok(Math.abs(p3.store.max - 4) < 0.02, `store → handler max is 4 ms (${p3.store.max})`);
  t.ok(Math.abs(rec.figures(4).store.max - 1) < 0.01, 'store → handler of the IPv6 record');
});

t.test('a record cut short at the end of the buffer is not read', async (t) => {
  const sent = 1_764_000_000_000_000;
  const one = stored(body(1, 0, sent), sent / 1000, '127.0.0.1:1', '127.0.0.1:2', 0);
  const pull = Buffer.concat([one, one.subarray(0, 40)]);
  const rec = new PhaseRecorder();
  walkRecords(pull, 0, pull.length, rec, sent + 1000);
  t.equal(rec.figures(1).count, 1);
});

t.test('the histogram with 1000 buckets a decade reads a percentile within 0.23 %', async (t) => {
  const fine = new LatencyHistogram(1000);
  const coarse = new LatencyHistogram();
  for (let i = 1; i <= 1000; i++) {
    fine.record(0.1 + i / 10_000); // 0.1001 .. 0.2 ms
    coarse.record(0.1 + i / 10_000);
  }
  const exact = 0.15;
  t.ok(fine.percentile(50) >= exact && fine.percentile(50) <= exact * 1.0024, `fine p50 ${fine.percentile(50)}`);
  t.ok(coarse.percentile(50) >= exact && coarse.percentile(50) <= exact * 1.024, `coarse p50 ${coarse.percentile(50)}`);
  t.equal(fine.max, 0.2);
});

t.test('bench --latency refuses rates that are not percentages before it starts anything', async (t) => {
  const { command } = await import('../../bench/harness/command.js');
  const io = { stdout: process.stdout, stderr: process.stderr } as unknown as Parameters<typeof command.run>[1];
  await t.rejects(command.run(['--latency', '--rates', '10,0'], io), { name: 'UsageError', message: /--rates/ });
  await t.rejects(command.run(['--latency', '--phase-seconds', '0'], io), { name: 'UsageError' });
});
