// Two rules of the test sources: a test waits for events (an emitter's event, a promise, a
// condition polled by `until`) or moves a ManualClock, never for a fixed time; and the one way to
// poll a condition is test/support/until.ts. Both scan the TypeScript sources under test/.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { repoRoot } from './maven-jars.js';

const root = repoRoot();
/** This file: its KEPT list quotes the waits it allows. */
const SELF = 'test/support/no-sleeps.test.ts';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = sources(join(root, 'test')).map((p) => ({
  file: relative(root, p).split('\\').join('/'),
  lines: readFileSync(p, 'utf8').split('\n'),
}));

/** Files that wait on real JVMs (brokers, name servers, the proxy, Java clients): paced for them, out of these rules' reach. */
const REAL_BROKER = [
  /^test\/interop\/(real-broker[^/]*|rocketwire-real-broker)\.test\.ts$/,
  /^test\/interop\/(java-[^/]*|capture-java\.test|broker-facts|toxiproxy|harness)\.ts$/,
  /^test\/capture\/doctor-java\.test\.ts$/,
  /^test\/support\/(jvm|maven-jars|raw-remoting|real-[^/]*)\.ts$/,
];

const MIN_MS = 50;
const N = String.raw`(\d[\d_]*)`;
/** A promise that resolves after a fixed time: setTimeout handed a resolver, or a sleep-like helper called with a number. */
const SLEEPS = [
  new RegExp(String.raw`(?<![.\w])setTimeout\(\s*(?:r|res|resolve|done|ok|next)\s*,\s*${N}\s*\)`),
  new RegExp(String.raw`(?<![.\w])setTimeout\(\s*\(\)\s*=>\s*(?:r|res|resolve)\(\)\s*,\s*${N}\s*\)`),
  new RegExp(String.raw`(?<![.\w])(?:sleep|delay|tick|turn|pause|wait)\(\s*(?:[\w.]+\s*,\s*)?${N}\s*[,)]`),
  // node:timers/promises' setTimeout(ms) awaited as is (tap's t.setTimeout is a method call, not matched)
  new RegExp(String.raw`await\s+setTimeout\(\s*${N}\s*[,)]`),
];

/**
 * Fixed waits kept, each for its reason: the time itself is what the test is about (the doctor reads
 * durations off packet timestamps the kernel writes), or no event marks the moment.
 */
const KEPT: { file: string; text: string; count: number; why: string }[] = [
  {
    file: 'test/capture/doctor-frozen.test.ts',
    text: 'sleep(1500)',
    count: 1,
    why: 'the broker is SIGSTOPped this long: the capture must show a response slower than 1 s',
  },
  {
    file: 'test/capture/doctor-frozen.test.ts',
    text: 'sleep(800)',
    count: 1,
    why: 'frozen until the capture ends: the held pull must outlive suspend time + longPollMarginMs on the wire',
  },
  {
    file: 'test/capture/doctor-live.test.ts',
    text: 'sleep(250)',
    count: 1,
    why: 'six sends 250 ms apart: the lag must grow for longer than lagStallMs in packet time',
  },
  {
    file: 'test/capture/doctor-live.test.ts',
    text: 'sleep(100)',
    count: 2,
    why: 'members join and leave more than rebalanceBurstMs apart in packet time, so the doctor counts separate changes',
  },
  {
    file: 'test/capture/doctor-live.test.ts',
    text: 'sleep(200)',
    count: 1,
    why: "the scene's tail: the duration rules measure the stalled consumer up to the capture's end",
  },
  {
    file: 'test/capture/doctor-capture.ts',
    text: 'setTimeout(r, 100)',
    count: 1,
    why: 'tcpdump gives no sign that it has written all it read: a frame count that stays put for 100 ms is the end',
  },
  {
    file: 'test/producer/producer.test.ts',
    text: 'setTimeout(resolve, 50)',
    count: 1,
    why: "the client instance's first route refresh is a system-clock timer 10 ms after start; a ManualClock would also move the bornTimestamp the test checks against Date.now()",
  },
];

function realBroker(file: string): boolean {
  return REAL_BROKER.some((re) => re.test(file));
}

function code(line: string): boolean {
  const s = line.trim();
  return !(s.startsWith('//') || s.startsWith('*') || s.startsWith('/*'));
}

t.test(`no fixed sleep of ${MIN_MS} ms or more outside the real-broker suites`, async (t) => {
  const found = new Map<string, string[]>();
  for (const { file, lines } of files) {
    if (realBroker(file) || file === SELF) continue;
    lines.forEach((line, i) => {
      if (!code(line)) return;
      for (const re of SLEEPS) {
        const m = re.exec(line);
        if (m && Number(m[1]!.replace(/_/g, '')) >= MIN_MS) {
          const list = found.get(file) ?? [];
          list.push(`${file}:${i + 1}: ${line.trim()}`);
          found.set(file, list);
          break;
        }
      }
    });
  }
  const unexplained: string[] = [];
  for (const [file, hits] of found) {
    const rest = [...hits];
    for (const k of KEPT.filter((k) => k.file === file)) {
      for (let n = 0; n < k.count; n++) {
        const at = rest.findIndex((h) => h.includes(k.text));
        if (at >= 0) rest.splice(at, 1);
      }
    }
    unexplained.push(...rest);
  }
  t.same(
    unexplained,
    [],
    'await an event, poll with until, or move a ManualClock; a wait that must stay goes in KEPT with its reason',
  );
  for (const k of KEPT) {
    const hits = (found.get(k.file) ?? []).filter((h) => h.includes(k.text)).length;
    t.equal(hits, k.count, `KEPT still describes ${k.file} ${k.text} (${k.why})`);
  }
});

t.test('until / waitFor / eventually are defined in test/support only', async (t) => {
  const DEFINITION =
    /(?:function\s*\*?\s*(?:until|waitFor|waitUntil|eventually)\b|(?:const|let|var)\s+(?:until|waitFor|waitUntil|eventually)\s*=\s*(?:async\b|\(|function\b))/;
  // A program of a user's own project, in a string: it compiles against the package alone and cannot import test/support.
  const OUTSIDE = new Set(['test/api/user-program.ts']);
  const defined: string[] = [];
  for (const { file, lines } of files) {
    if (file.startsWith('test/support/') || OUTSIDE.has(file)) continue;
    lines.forEach((line, i) => {
      if (code(line) && DEFINITION.test(line)) defined.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  t.same(defined, [], 'import until, waitFor or eventually from test/support/until.ts instead of writing one');
});
