import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { produce, uniqueName, withBroker } from '../consumer/helpers.js';

const BIN = fileURLToPath(new URL('../../../bin/rocketwire.js', import.meta.url));

/** Starts `rocketwire consume`, sends `signal` once it printed `lines` lines, and resolves when it exits. */
function consumeUntil(
  args: string[],
  lines: number,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'consume', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBUG: '' },
    });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!sent && stdout.split('\n').length > lines) {
        sent = true;
        child.kill(signal);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

t.test('Ctrl-C in consume prints a summary on stderr and exits 130, in every mode', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 3);
  for (const mode of ['push', 'lite', 'pop']) {
    const r = await consumeUntil(
      [
        '--namesrv',
        broker.namesrv,
        '--topic',
        topic,
        '--group',
        uniqueName('cg'),
        '--from',
        'first',
        '--mode',
        mode,
        '--json',
      ],
      3,
      'SIGINT',
    );
    t.equal(r.code, 130, `${mode}: ${r.stderr}`);
    t.equal(r.stdout.trim().split('\n').length, 3, `${mode}: stdout has the messages only`);
    t.match(
      r.stderr,
      new RegExp(`^rocketwire consume: interrupted after 3 messages from ${topic} in [\\d.]+ s \\(\\d+ msgs/s\\)\\n$`),
      `${mode}: one summary line`,
    );
  }
});

t.test('SIGTERM is a stop as asked: exit 0, no summary', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 2);
  const r = await consumeUntil(
    ['--namesrv', broker.namesrv, '--topic', topic, '--group', uniqueName('cg'), '--from', 'first'],
    2,
    'SIGTERM',
  );
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr, '');
});
