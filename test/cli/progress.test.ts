import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { main } from '../../lib/cli/main.js';
import { ProgressLine } from '../../lib/cli/progress.js';
import { createResponse, RequestCode, ResponseCode } from '../../protocol/index.js';
import { routeJson, startFakeBroker, startFakeNameServer } from '../client/fake-cluster.js';
import { produce, uniqueName, withBroker } from '../consumer/helpers.js';

/** A stderr that says it is a terminal, as process.stderr does on one. */
function terminal(columns = 120): PassThrough & { isTTY: boolean; columns: number; text(): string } {
  const s = new PassThrough() as PassThrough & { isTTY: boolean; columns: number; text(): string };
  let text = '';
  s.on('data', (d: Buffer) => (text += d.toString()));
  s.isTTY = true;
  s.columns = columns;
  s.text = () => text;
  return s;
}

async function run(
  args: string[],
  stderr: NodeJS.WritableStream & { text?: () => string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  let stdout = '';
  let errText = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  if (!stderr.text) stderr.on('data', (d: Buffer) => (errText += d.toString()));
  const code = await main(args, { stdin: new PassThrough(), stdout: out, stderr });
  return { code, stdout, stderr: stderr.text ? stderr.text() : errText };
}

t.test(
  'the line: only on a terminal and without --json; drawn in place, cut to the width, erased at the end',
  async (t) => {
    t.equal(
      ProgressLine.start(
        new PassThrough(),
        false,
        () => 0,
        () => 'x',
      ),
      null,
      'not a terminal: no line',
    );
    t.equal(
      ProgressLine.start(
        terminal(),
        true,
        () => 0,
        () => 'x',
      ),
      null,
      '--json: no line',
    );
    let now = 1000;
    let n = 0;
    const err = terminal(20);
    const line = ProgressLine.start(
      err,
      false,
      () => n,
      (rate, ms) => `n=${n} rate=${rate} ms=${ms} and more text`,
      () => now,
    )!;
    t.teardown(() => line.stop());
    n = 50;
    now = 1500;
    line.draw();
    t.equal(err.text(), '\rn=50 rate=100 ms=50\x1b[K', 'rate over the last interval, cut to 19 columns');
    line.clear();
    line.clear();
    t.equal(err.text(), '\rn=50 rate=100 ms=50\x1b[K\r\x1b[K', 'erased once');
    line.stop();
    t.equal(err.text(), '\rn=50 rate=100 ms=50\x1b[K\r\x1b[K', 'nothing to erase');
  },
);

/** A cluster whose broker takes 40 ms per send, so a run lasts long enough to see the line. */
async function slowCluster(t: Test): Promise<string> {
  const broker = await startFakeBroker();
  let off = 0;
  broker.on(RequestCode.SEND_MESSAGE_V2, async (req) => {
    await sleep(40);
    return createResponse(req, ResponseCode.SUCCESS, {
      extFields: {
        msgId: '7F00000100002A9F' + String(off).padStart(16, '0'),
        queueId: '0',
        queueOffset: String(off++),
        MSG_REGION: 'DefaultRegion',
      },
    });
  });
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await broker.close();
  });
  return ns.addr;
}

t.test('produce shows sent/of/rate on a terminal, then the summary alone on stdout', async (t) => {
  const ns = await slowCluster(t);
  const args = [
    'produce',
    '--namesrv',
    ns,
    '--topic',
    'TopicTest',
    '--count',
    '20',
    '--concurrency',
    '1',
    '--size',
    '10',
  ];
  const err = terminal();
  const r = await run(args, err);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^sent 20 failed 0 to TopicTest in [\d.]+ s: \d+ msgs\/s/);
  t.match(r.stderr, /\rsent \d+ of 20 \(\d+%\), \d+ msgs\/s, [\d.]+ s\x1b\[K/, 'the live line');
  t.ok(r.stderr.endsWith('\r\x1b[K'), 'erased before the summary');
  t.notMatch(r.stderr, /\n/, 'no line of its own in the scrollback');

  const json = await run([...args, '--json'], terminal());
  t.equal(json.code, 0);
  t.equal(json.stderr, '', '--json: nothing extra');
  const piped = await run(args, new PassThrough());
  t.equal(piped.code, 0);
  t.equal(piped.stderr, '', 'stderr not a terminal: nothing extra');
});

t.test('consume shows consumed/rate on a terminal and erases it before each message', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 5);
  const base = ['consume', '--namesrv', broker.namesrv, '--topic', topic, '--from', 'first', '--idle-exit', '1'];
  const err = terminal();
  const r = await run([...base, '--group', uniqueName('cg')], err);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim().split('\n').length, 5);
  t.match(r.stderr, /\rconsumed 5, \d+ msgs\/s, [\d.]+ s\x1b\[K/, 'the live line');
  t.ok(r.stderr.endsWith('\r\x1b[K'), 'erased at the end');
  t.notMatch(r.stderr, /\n/);

  const lite = await run([...base, '--group', uniqueName('cg'), '--mode', 'lite'], terminal());
  t.equal(lite.code, 0, lite.stderr);
  t.match(lite.stderr, /\rconsumed 5, \d+ msgs\/s/, '--mode lite has it too');
  // with --limit the line says of how many; the run must last a tick for a line to be drawn
  const limited = await run([...base, '--group', uniqueName('cg'), '--limit', '6'], terminal());
  t.equal(limited.code, 0, limited.stderr);
  t.match(limited.stderr, /\rconsumed 5 of 6, \d+ msgs\/s/);

  const json = await run([...base, '--group', uniqueName('cg'), '--json'], terminal());
  t.equal(json.code, 0);
  t.equal(json.stderr, '', '--json: nothing extra');
  const piped = await run([...base, '--group', uniqueName('cg')], new PassThrough());
  t.equal(piped.code, 0);
  t.equal(piped.stderr, '', 'stderr not a terminal: nothing extra');
});
