// The store-damage suite: for each kind of damage a disk or a person does
// to the store's files, every intact message is still consumable after a restart, queue offsets do
// not move, and the broker says what it found and repaired.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { MessageStore, StorePathError } from '../../lib/broker/index.js';
import { ConsumeQueue } from '../../lib/broker/consume-queue.js';
import { storePath } from '../../lib/broker/atomic-file.js';
import { ManualClock } from '../../lib/clock.js';
import { socketAddressText } from '../../lib/broker/message-record.js';
import {
  QUEUES,
  SEGMENT,
  consumable,
  cqFile,
  expected,
  fill,
  garbage,
  inner,
  openStore,
  overlaps,
  overwrite,
  segments,
  type Stored,
} from './store-damage-helpers.js';

/** The message stored `k` records into segment `index` (0 = first, -1 = last). */
function inSegment(dir: string, all: Stored[], index: number, k = 3): Stored {
  const segs = segments(dir);
  const base = Number(path.basename(segs[index < 0 ? segs.length + index : index]!));
  return all.filter((m) => m.phys >= base && m.phys < base + SEGMENT)[k]!;
}

function reopen(t: Test, dir: string): { s: MessageStore; warnings: string[] } {
  const warnings: string[] = [];
  const s = openStore(dir, warnings);
  t.teardown(() => s.close());
  return { s, warnings };
}

function counts(all: Stored[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of all) m.set(`${x.topic}@${x.queueId}`, (m.get(`${x.topic}@${x.queueId}`) ?? 0) + 1);
  return m;
}

function sameMaxOffsets(t: Test, s: MessageStore, all: Stored[]): void {
  for (const [key, n] of counts(all)) {
    const [topic, q] = key.split('@') as [string, string];
    t.equal(
      s.getMaxOffset(topic, Number(q)),
      n,
      `${key}: max offset unchanged (offsets of later messages do not move)`,
    );
  }
}

for (const [where, index] of [
  ['first', 0],
  ['middle', 1],
  ['last', -1],
] as const) {
  t.test(`64 overwritten bytes in the ${where} segment: only the damaged record is lost`, async (t) => {
    const dir = t.testdir({});
    const all = fill(dir);
    t.ok(segments(dir).length >= 4, 'several segments');
    const victim = inSegment(dir, all, index);
    const from = victim.phys + 10;
    overwrite(dir, from, garbage(64));
    const { s, warnings } = reopen(t, dir);
    const lost = (m: Stored): boolean => overlaps(m, from, from + 64);
    t.ok(all.filter(lost).length >= 1 && all.filter(lost).length <= 2, 'the stretch hits one or two records');
    t.same(consumable(s), expected(all, lost), 'every intact record, also those after the damage, is consumable');
    sameMaxOffsets(t, s, all);
    t.match(warnings.join('\n'), /damaged bytes at offset \d+ .*skipped them and kept every intact record after them/);
    t.match(warnings.join('\n'), /recovery: indexed/);
    t.equal(s.putMessages([inner('DamageA', 0, 'after')]).status, 'PUT_OK', 'the store takes writes again');
  });

  t.test(`a zeroed hole of 300 bytes in the ${where} segment`, async (t) => {
    const dir = t.testdir({});
    const all = fill(dir);
    const victim = inSegment(dir, all, index, 2);
    overwrite(dir, victim.phys, Buffer.alloc(300));
    const { s, warnings } = reopen(t, dir);
    const lost = (m: Stored): boolean => overlaps(m, victim.phys, victim.phys + 300);
    t.same(consumable(s), expected(all, lost));
    sameMaxOffsets(t, s, all);
    t.match(warnings.join('\n'), /damaged bytes/);
  });
}

for (const [where, index] of [
  ['first', 0],
  ['middle', 1],
] as const) {
  t.test(`the ${where} segment cut short: only its records after the cut are lost`, async (t) => {
    const dir = t.testdir({});
    const all = fill(dir);
    const seg = segments(dir)[index]!;
    const base = Number(path.basename(seg));
    const cut = inSegment(dir, all, index, 4).phys + 20 - base;
    fs.truncateSync(seg, cut);
    const { s, warnings } = reopen(t, dir);
    const lost = (m: Stored): boolean => m.phys + m.size > base + cut && m.phys < base + SEGMENT;
    t.same(consumable(s), expected(all, lost), 'the other segments are untouched');
    sameMaxOffsets(t, s, all);
    t.match(warnings.join('\n'), /are not a complete record; the segment was cut short/);
    t.equal(fs.statSync(seg).size, cut, 'an older segment is left as it is');
  });
}

t.test('the last segment cut inside a record: the torn tail is cut, everything before it kept', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const seg = segments(dir).at(-1)!;
  const base = Number(path.basename(seg));
  const victim = inSegment(dir, all, -1, 2);
  fs.truncateSync(seg, victim.phys - base + 30);
  const { s, warnings } = reopen(t, dir);
  const lost = (m: Stored): boolean => m.phys >= victim.phys;
  t.same(consumable(s), expected(all, lost));
  sameMaxOffsets(t, s, all);
  t.match(warnings.join('\n'), /cut a torn tail of 30 bytes/);
  t.equal(fs.statSync(seg).size, victim.phys - base, 'the file ends at the last intact record');
  const w = s.putMessages([inner('DamageB', 0, 'next')]).written[0]!;
  t.equal(w.physOffset, victim.phys, 'the next write goes where the torn record was');
  t.equal(w.queueOffset, counts(all).get('DamageB@0'), 'and gets the next queue offset, not a lost one');
});

t.test('a crash-torn tail with no other damage is cut silently apart from one line', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir, 30);
  const seg = segments(dir).at(-1)!;
  fs.appendFileSync(seg, fs.readFileSync(seg).subarray(0, 50));
  const { s, warnings } = reopen(t, dir);
  t.same(consumable(s), expected(all));
  t.same(warnings, [warnings.find((w) => /cut a torn tail of 50 bytes/.test(w))], 'one line: what was cut');
});

t.test('an undamaged store starts without a word', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const { s, warnings } = reopen(t, dir);
  t.same(consumable(s), expected(all));
  t.same(warnings, []);
});

t.test('consume queues: deleted, damaged, zeroed or cut files are rebuilt from the commit log', async (t) => {
  const damages: [string, (dir: string) => void][] = [
    ['one file deleted', (dir) => fs.rmSync(cqFile(dir, 'DamageA', 1))],
    ['a queue folder deleted', (dir) => fs.rmSync(path.join(dir, 'consumequeue', 'DamageB'), { recursive: true })],
    ['every consume queue deleted', (dir) => fs.rmSync(path.join(dir, 'consumequeue'), { recursive: true })],
    [
      'entries overwritten with garbage',
      (dir) => {
        const fd = fs.openSync(cqFile(dir, 'DamageA', 0), 'r+');
        fs.writeSync(fd, garbage(60, 3), 0, 60, 20 * 5 + 4);
        fs.closeSync(fd);
      },
    ],
    [
      'entries zeroed',
      (dir) => {
        const fd = fs.openSync(cqFile(dir, 'DamageA', 0), 'r+');
        fs.writeSync(fd, Buffer.alloc(200), 0, 200, 20 * 3);
        fs.closeSync(fd);
      },
    ],
    ['a file cut inside an entry', (dir) => fs.truncateSync(cqFile(dir, 'DamageB', 0), 20 * 7 + 3)],
    ['a file emptied', (dir) => fs.truncateSync(cqFile(dir, 'DamageA', 1), 0)],
  ];
  for (const [what, damage] of damages) {
    t.test(what, async (t) => {
      const dir = t.testdir({});
      const all = fill(dir);
      damage(dir);
      const { s, warnings } = reopen(t, dir);
      t.same(consumable(s), expected(all), 'every message reachable again');
      sameMaxOffsets(t, s, all);
      t.match(warnings.join('\n'), /consume queue .*(missing|damaged|entries where the checkpoint recorded)/);
      t.match(warnings.join('\n'), /recovery: indexed [1-9]\d* messages/);
      s.close();
      // the repair is on disk: the next start has nothing to say
      const again = reopen(t, dir);
      t.same(consumable(again.s), expected(all));
      t.same(again.warnings, [], 'the next start is quiet');
    });
  }
});

t.test('a garbage checkpoint: the whole commit log is indexed again', async (t) => {
  for (const text of ['{"dispatched":', 'garbage', '{"dispatched":-5}', '{"dispatched":10,"queues":[1]}', '']) {
    const dir = t.testdir({});
    const all = fill(dir, 60);
    fs.rmSync(path.join(dir, 'consumequeue'), { recursive: true }); // so that only the commit log can tell
    fs.writeFileSync(path.join(dir, 'checkpoint.json'), text);
    const { s, warnings } = reopen(t, dir);
    t.same(consumable(s), expected(all), `checkpoint ${JSON.stringify(text)}`);
    t.match(warnings.join('\n'), /checkpoint.json cannot be read .*indexing the whole commit log again/);
    s.close();
  }
});

t.test('a checkpoint of the old layout (no queue counts): a queue missing entries is found by its gap', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const cp = JSON.parse(fs.readFileSync(path.join(dir, 'checkpoint.json'), 'utf8')) as { dispatched: number };
  fs.writeFileSync(path.join(dir, 'checkpoint.json'), JSON.stringify({ dispatched: cp.dispatched - 3000 }));
  fs.truncateSync(cqFile(dir, 'DamageA', 0), 20 * 4);
  const { s, warnings } = reopen(t, dir);
  t.same(consumable(s), expected(all));
  t.match(warnings.join('\n'), /miss entries before the checkpoint; indexing them again/);
});

t.test('damage in the commit log and a deleted consume queue together', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const victim = inSegment(
    dir,
    all.filter((m) => m.topic === 'DamageA' && m.queueId === 1),
    1,
    0,
  );
  overwrite(dir, victim.phys + 40, garbage(64, 11));
  fs.rmSync(cqFile(dir, 'DamageA', 1));
  const { s } = reopen(t, dir);
  const lost = (m: Stored): boolean => overlaps(m, victim.phys + 40, victim.phys + 104);
  t.same(consumable(s), expected(all, lost));
  sameMaxOffsets(t, s, all);
});

t.test('a record damaged after start-up is skipped at read time, with one line', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const warnings: string[] = [];
  const s = openStore(dir, warnings);
  t.teardown(() => s.close());
  const victim = inSegment(dir, all, 0, 1);
  overwrite(dir, victim.phys, garbage(8, 5)); // size and magic: the header check sees it
  t.same(
    consumable(s),
    expected(all, (m) => m === victim),
  );
  consumable(s);
  t.equal(warnings.filter((w) => /no intact record/.test(w)).length, 1, 'said once, not on every pull');
});

t.test('the default warning goes to stderr', async (t) => {
  const dir = t.testdir({});
  fill(dir, 30);
  fs.writeFileSync(path.join(dir, 'checkpoint.json'), 'not json');
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  let s: MessageStore;
  try {
    s = new MessageStore({
      dir,
      storeHost: socketAddressText('127.0.0.1', 10911),
      clock: new ManualClock(),
      segmentSize: SEGMENT,
      flushIntervalMs: 60_000,
    });
    s.open();
  } finally {
    process.stderr.write = write;
  }
  s.close();
  t.match(lines.join(''), /^rocketwire broker: .*checkpoint.json cannot be read/m);
});

t.test('the store never opens a path outside its root', async (t) => {
  const root = t.testdir({ store: {} });
  const dir = path.join(root, 'store');
  const s = openStore(dir);
  t.teardown(() => s.close());
  for (const topic of ['../escape', 'x/../../escape_poc', '%RETRY%x/../DamageA', '..', '.', 'a\\b', 'nul\u0000x', '']) {
    const r = s.putMessages([inner(topic, 0, 'evil')]);
    t.equal(r.status, 'MESSAGE_ILLEGAL', `topic ${JSON.stringify(topic)} refused`);
    t.match(r.remark, /would leave the store root/);
  }
  t.same(fs.readdirSync(root), ['store'], 'nothing created beside the store');
  t.equal(s.getMaxOffset('DamageA', 0), 0, 'no entry landed in another topic');
  t.throws(() => new ConsumeQueue(path.join(dir, 'consumequeue'), '../x', 0), StorePathError);
  t.throws(() => storePath(dir, 'ok', '..'), { name: 'StorePathError', part: '..' });
  t.equal(storePath(dir, '%DLQ%g', '3'), path.join(dir, '%DLQ%g', '3'), 'ordinary names pass');
});

t.test('a record with a path-like topic in the commit log is not indexed on restart', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir, 30);
  // a record written before names were checked: copy one and rename its topic in place
  const warnings: string[] = [];
  const s = openStore(dir, warnings);
  const r = s.putMessages([inner('Qx/../DamageA', 0, 'evil')]);
  t.equal(r.status, 'MESSAGE_ILLEGAL');
  s.close();
  t.ok(QUEUES.length > 0);
  const again = reopen(t, dir);
  t.same(consumable(again.s), expected(all));
});

t.test('damage the body CRC does not cover (topic and properties lengths) is found too', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const victim = inSegment(dir, all, 1, 2);
  // the last bytes of a record are its properties; its properties length sits just before them
  const propsLen = Buffer.byteLength(`UNIQ_KEY\u0001K-${victim.body}\u0002TAGS\u0001tag`);
  overwrite(dir, victim.phys + victim.size - propsLen - 2, Buffer.from([0x5a, 0x5a]));
  const { s, warnings } = reopen(t, dir);
  t.same(
    consumable(s),
    expected(all, (m) => m === victim),
    'the record is not served; its neighbours are',
  );
  t.match(warnings.join('\n'), /damaged bytes/);
});

t.test('a segment file deleted from the middle: the others are served, the gap is named', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const seg = segments(dir)[1]!;
  const base = Number(path.basename(seg));
  fs.rmSync(seg);
  const { s, warnings } = reopen(t, dir);
  t.same(
    consumable(s),
    expected(all, (m) => m.phys >= base && m.phys < base + SEGMENT),
  );
  sameMaxOffsets(t, s, all);
  t.match(
    warnings.join('\n'),
    new RegExp(`no segment holds offsets ${base}\\.\\.${base + SEGMENT - 1} \\(1 segment file\\(s\\) missing\\)`),
  );
});

t.test('header fields the CRC does not cover cannot make the index explode', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir, 60);
  fs.rmSync(path.join(dir, 'consumequeue'), { recursive: true });
  // a record whose queue offset field says 2^40: it passes magic, size, offset and CRC
  const victim = all.at(-5)!;
  const b = Buffer.alloc(8);
  b.writeUInt32BE(256, 0);
  overwrite(dir, victim.phys + 20, b);
  const cp = path.join(dir, 'checkpoint.json');
  const o = JSON.parse(fs.readFileSync(cp, 'utf8')) as { queues: Record<string, number> };
  o.queues['DamageB@0'] = 2 ** 45;
  fs.writeFileSync(cp, JSON.stringify(o));
  const { s, warnings } = reopen(t, dir);
  t.same(
    consumable(s),
    expected(all, (m) => m === victim),
    'the misfiled record is not indexed, the rest is',
  );
  t.ok(s.getMaxOffset(victim.topic, victim.queueId) < 100, 'no million holes');
  t.equal(s.getMaxOffset('DamageB', 0), all.filter((m) => m.topic === 'DamageB').length);
  t.match(warnings.join('\n'), /claims queue offset 1099511627\d+ .*not indexed/);
  t.match(warnings.join('\n'), /was recorded with 35184372088832 entries.*not filling the difference/);
});

t.test('many damaged records: every intact one is kept and the report stays a few lines', async (t) => {
  const dir = t.testdir({});
  const all = fill(dir);
  const victims = all.filter((_, i) => i % 9 === 4);
  for (const v of victims) overwrite(dir, v.phys + 4, garbage(4, v.phys)); // the magic code
  const { s, warnings } = reopen(t, dir);
  t.ok(victims.length > 30, `${victims.length} damaged records`);
  t.same(
    consumable(s),
    expected(all, (m) => victims.includes(m)),
  );
  sameMaxOffsets(t, s, all);
  t.ok(warnings.length <= 45, `${warnings.length} lines`);
  t.match(warnings.join('\n'), /more damaged stretches/);
  t.match(warnings.join('\n'), /more runs of queue offsets with no intact record/);
});
