import t from 'tap';
import { UniqueCount } from '../../bench/harness/run.js';
import type { MessageExt } from '../../lib/consumer/index.js';

function msg(n: number): MessageExt {
  const body = Buffer.alloc(16);
  body.writeBigInt64BE(BigInt(n), 0);
  return { body } as MessageExt;
}

t.test(
  'UniqueCount counts each numbered message once and every repeat as a duplicate, across word boundaries',
  async (t) => {
    const n = new UniqueCount(100);
    n.add([0, 31, 32, 33, 63, 64, 99].map(msg));
    t.equal(n.unique, 7);
    t.equal(n.duplicates, 0);
    n.add([31, 32, 0, 99, 98].map(msg));
    t.equal(n.unique, 8, 'only 98 is new');
    t.equal(n.duplicates, 4);
    n.add([100, 1000, -1].map(msg));
    t.equal(n.unique, 8, 'numbers outside 0..expect-1 are ignored');
    t.equal(n.duplicates, 4);
    const all = new UniqueCount(1000);
    all.add(Array.from({ length: 1000 }, (_, i) => msg(999 - i)));
    t.equal(all.unique, 1000);
    t.equal(all.duplicates, 0);
    t.ok(all.firstAt > 0 && all.lastAt >= all.firstAt);
  },
);
