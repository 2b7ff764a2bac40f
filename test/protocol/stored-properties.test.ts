import t from 'tap';
import { decodeProperties, encodeProperties } from '../../protocol/index.js';
import { appendProperties, readProperty } from '../../protocol/stored-properties.js';

// Deterministic pseudo-random strings over an alphabet rich in separators, names the broker adds
// and characters an object orders or guards specially.
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x80000000;
  };
}
const PIECES = ['a', 'b', 'T', 'TAGS', 'KEYS', 'CLUSTER', 'MSG_REGION', 'x', '7', '__proto__', 'é', '\u0001', '\u0002'];

function reference(text: string, adds: [string, string][]): string {
  const o = decodeProperties(text);
  for (const [k, v] of adds) o[k] = v;
  return encodeProperties(o);
}

t.test('appendProperties is what decoding, assigning and encoding write, whenever it answers', (t) => {
  const r = rng(7);
  const adds: [string, string][] = [
    ['MSG_REGION', 'DefaultRegion'],
    ['TRACE_ON', 'true'],
    ['CLUSTER', 'c1'],
  ];
  let answered = 0;
  for (let i = 0; i < 20_000; i++) {
    let s = '';
    const n = Math.floor(r() * 12);
    for (let k = 0; k < n; k++) s += PIECES[Math.floor(r() * PIECES.length)];
    const got = appendProperties(s, adds);
    if (got !== undefined) {
      answered++;
      if (got !== reference(s, adds)) t.fail(`differs for ${JSON.stringify(s)}: ${JSON.stringify(got)}`);
    }
    for (const name of ['TAGS', 'KEYS', 'a', 'T', 'CLUSTER']) {
      if (readProperty(s, name) !== decodeProperties(s)[name]) t.fail(`readProperty ${name} of ${JSON.stringify(s)}`);
    }
  }
  t.ok(answered > 500, `answered without decoding for ${answered} of 20000 strings`);
  t.end();
});

t.test('the strings producers send take the path without decoding', (t) => {
  const adds: [string, string][] = [
    ['MSG_REGION', 'DefaultRegion'],
    ['TRACE_ON', 'true'],
    ['CLUSTER', 'DefaultCluster'],
  ];
  const java = encodeProperties({
    KEYS: 'k1 k2',
    UNIQ_KEY: 'AC11000100002A9F0000000000000001',
    WAIT: 'true',
    TAGS: 'TagA',
  });
  t.equal(
    appendProperties(java, adds),
    `${java}\u0002MSG_REGION\u0001DefaultRegion\u0002TRACE_ON\u0001true\u0002CLUSTER\u0001DefaultCluster`,
  );
  t.equal(appendProperties(`${java}\u0002`, adds), appendProperties(java, adds), 'a trailing separator is dropped');
  t.equal(
    appendProperties('', adds),
    'MSG_REGION\u0001DefaultRegion\u0002TRACE_ON\u0001true\u0002CLUSTER\u0001DefaultCluster',
  );
  t.equal(
    appendProperties(`CLUSTER\u0001DefaultCluster\u0002A\u0001b`, adds),
    `CLUSTER\u0001DefaultCluster\u0002A\u0001b\u0002MSG_REGION\u0001DefaultRegion\u0002TRACE_ON\u0001true`,
    'a name present with the same value stays in place',
  );
  t.equal(appendProperties(`CLUSTER\u0001other`, adds), undefined, 'another value: decode and encode');
  t.equal(appendProperties(`A\u0001b\u0002A\u0001c`, adds), undefined, 'a name twice: decode and encode');
  t.equal(appendProperties(`A\u0001b\u00027\u0001c`, adds), undefined, 'an integer-like name: decode and encode');
  t.equal(readProperty(java, 'TAGS'), 'TagA');
  t.equal(readProperty(java, 'AGS'), undefined, 'only whole names');
  t.equal(readProperty(`TAGS\u0001a\u0002TAGS\u0001b`, 'TAGS'), 'b', 'a later duplicate wins, as decoding');
  t.end();
});
