// Retention and the key index: sealed index files that point only below the commit log's new start
// are deleted, and a restart accepts an index whose first file starts past 0.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { IndexService } from '../../lib/broker/index-service.js';
import { createMessageRecord } from '../admin/record.js';

t.test('sealed index files below the new min offset go; the rest answers, across a restart', async (t) => {
  const dir = t.testdir({});
  const log: Array<{ offset: number; record: Buffer }> = [];
  let at = 0;
  const tuning = { entriesPerFile: 16, slotsPerFile: 4, flushEntries: 3 };
  const first = new IndexService(dir, () => undefined, tuning);
  first.open({ commitLogEnd: 0, records: () => [] });
  for (let i = 0; i < 100; i++) {
    const props = { KEYS: `k${i % 3} only-${i}` };
    const r = createMessageRecord('T', props, i);
    log.push({ offset: at, record: r });
    first.add('T', props, at, r.length, 1000 + i);
    at += r.length;
  }
  const sealedFiles = (): string[] => fs.readdirSync(path.join(dir, 'index')).filter((n) => n.endsWith('.idx'));
  const before = sealedFiles().length;
  const min = log[50]!.offset;
  const deleted = first.deleteBelow(min);
  t.ok(deleted > 0 && deleted < before, `${deleted} of ${before} sealed files deleted`);
  t.equal(sealedFiles().length, before - deleted);
  const phys = (idx: IndexService, k: string): number[] =>
    idx.query('T', k, 64, 0, Number.MAX_SAFE_INTEGER).entries.map((e) => e.phys);
  t.same(phys(first, 'only-99'), [log[99]!.offset], 'keys of records left are found');
  t.same(phys(first, 'only-2'), [], 'keys of records gone with the deleted files are not');
  t.ok(
    phys(first, 'k1').every((p) => p >= log[30]!.offset),
    'what the kept files hold',
  );
  first.close();
  const warnings: string[] = [];
  const asked: number[] = [];
  const second = new IndexService(dir, (l) => warnings.push(l), tuning);
  second.open({
    commitLogEnd: at,
    records: (from) => {
      asked.push(from);
      return log.filter((x) => x.offset >= from);
    },
  });
  t.same(warnings, [], 'an index starting past 0 is not damage');
  t.same(asked, [at], 'nothing indexed again');
  t.same(phys(second, 'only-99'), [log[99]!.offset]);
  second.close();
});
