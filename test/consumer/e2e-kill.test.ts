import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import t from 'tap';
import { brokerOffsets, produce, totalLag, uniqueName, until, withBroker } from './helpers.js';

const BIN = new URL('../../../bin/rocketwire.js', import.meta.url).pathname;

/** Runs `rocketwire consume --json`, feeding each message body to `onBody`. */
function consumeProcess(
  args: string[],
  onBody: (body: string) => void,
): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, 'consume', '--json', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  createInterface({ input: child.stdout! }).on('line', (line) => onBody((JSON.parse(line) as { body: string }).body));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited };
}

t.test(
  'SIGKILL a consumer process midway through 20 000 messages: its successor consumes the rest, lag ends at 0',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    const N = 20_000;
    await produce(broker.namesrv, topic, N, (i) => ({ body: `m${i}` }));
    const seen = new Set<string>();
    let first = 0;
    const p1 = consumeProcess(
      ['--namesrv', broker.namesrv, '--topic', topic, '--group', group, '--from', 'first'],
      (b) => {
        first++;
        seen.add(b);
      },
    );
    t.teardown(() => void p1.child.kill('SIGKILL'));
    await until(() => first >= 5000, 'the first process consumed 5000', 60_000);
    p1.child.kill('SIGKILL');
    await p1.exited;
    t.ok(first < N, `killed midway (${first} of ${N})`);
    let second = 0;
    const p2 = consumeProcess(
      ['--namesrv', broker.namesrv, '--topic', topic, '--group', group, '--idle-exit', '2'],
      (b) => {
        second++;
        seen.add(b);
      },
    );
    t.teardown(() => void p2.child.kill('SIGKILL'));
    t.equal(await p2.exited, 0, 'the successor exits cleanly when idle');
    t.equal(seen.size, N, 'every message consumed at least once');
    t.ok(first + second - N < 2000, `redeliveries bounded by what was uncommitted at the kill (${first + second - N})`);
    t.equal(totalLag(await brokerOffsets(broker.namesrv, topic, group)), 0, 'final lag 0');
  },
);
