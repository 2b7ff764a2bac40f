import t from 'tap';
import { namesrvOption, UsageError } from '../../lib/cli/common.js';
import { produce, uniqueName, withBroker } from '../consumer/helpers.js';
import { runCli } from './run-in-process.js';

const VARS = ['NAMESRV_ADDR', 'ROCKETWIRE_NAMESRV'] as const;

/** Runs with exactly these name-server variables set (the others unset), restoring them after. */
async function withEnv<T>(env: Partial<Record<(typeof VARS)[number], string>>, fn: () => Promise<T>): Promise<T> {
  const saved = VARS.map((k) => [k, process.env[k]] as const);
  for (const k of VARS) delete process.env[k];
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

t.test('namesrvOption: the flag, else NAMESRV_ADDR, else ROCKETWIRE_NAMESRV; empty is unset', async (t) => {
  t.equal(namesrvOption({ namesrv: 'a:1' }, { NAMESRV_ADDR: 'b:2', ROCKETWIRE_NAMESRV: 'c:3' }), 'a:1');
  t.equal(namesrvOption({}, { NAMESRV_ADDR: 'b:2', ROCKETWIRE_NAMESRV: 'c:3' }), 'b:2');
  t.equal(namesrvOption({}, { NAMESRV_ADDR: '', ROCKETWIRE_NAMESRV: 'c:3' }), 'c:3');
  t.equal(namesrvOption({}, { NAMESRV_ADDR: 'b:2;b:3' }), 'b:2;b:3');
  t.throws(
    () => namesrvOption({}, {}),
    new UsageError('--namesrv is required (or set NAMESRV_ADDR or ROCKETWIRE_NAMESRV)'),
  );
  t.throws(() => namesrvOption({ namesrv: '' }, { NAMESRV_ADDR: 'b:2' }), { message: '--namesrv must not be empty' });
});

t.test('without --namesrv every command uses NAMESRV_ADDR, then ROCKETWIRE_NAMESRV', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 3);
  // A dead port in the variable that must not be used proves which one was read.
  const dead = '127.0.0.1:1';
  for (const env of [
    { NAMESRV_ADDR: broker.namesrv, ROCKETWIRE_NAMESRV: dead },
    { ROCKETWIRE_NAMESRV: broker.namesrv },
  ]) {
    const which = Object.keys(env).join('+');
    await withEnv(env, async () => {
      const sent = await runCli(['produce', '--topic', topic, '--count', '2', '--json']);
      t.equal(sent.code, 0, `produce (${which}): ${sent.stderr}`);
      t.match(JSON.parse(sent.stdout), { sent: 2 });
      const offsets = await runCli(['offsets', '--topic', topic, '--group', group, '--json']);
      t.equal(offsets.code, 0, `offsets (${which}): ${offsets.stderr}`);
      const list = await runCli(['admin', 'topic', 'list']);
      t.equal(list.code, 0, `admin (${which}): ${list.stderr}`);
      t.match(list.stdout, topic);
      const consumed = await runCli([
        'consume',
        '--topic',
        topic,
        '--group',
        group,
        '--from',
        'first',
        '--limit',
        '1',
        '--json',
      ]);
      t.equal(consumed.code, 0, `consume (${which}): ${consumed.stderr}`);
      t.equal(consumed.stdout.trim().split('\n').length, 1);
    });
  }
  // request needs a replier; that it reads the variable shows in the address it names when the
  // name server is down.
  await withEnv({ NAMESRV_ADDR: dead }, async () => {
    const r = await runCli(['request', '--topic', topic, '--body', 'x', '--timeout', '500']);
    t.equal(r.code, 1);
    t.match(r.stderr, /127\.0\.0\.1:1/);
  });
});

t.test('--namesrv wins over the variables', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await withEnv({ NAMESRV_ADDR: '127.0.0.1:1', ROCKETWIRE_NAMESRV: '127.0.0.1:1' }, async () => {
    const r = await runCli(['produce', '--namesrv', broker.namesrv, '--topic', topic, '--json']);
    t.equal(r.code, 0, r.stderr);
  });
});

t.test('with neither the flag nor a variable, one line says how to give it', async (t) => {
  await withEnv({}, async () => {
    for (const args of [
      ['produce', '--topic', 'T'],
      ['consume', '--topic', 'T', '--group', 'g'],
      ['offsets', '--topic', 'T', '--group', 'g'],
      ['request', '--topic', 'T', '--body', 'x'],
      ['admin', 'topic', 'list'],
    ]) {
      const r = await runCli(args);
      t.equal(r.code, 2, args[0]);
      t.equal(r.stderr, `rocketwire ${args[0]}: --namesrv is required (or set NAMESRV_ADDR or ROCKETWIRE_NAMESRV)\n`);
    }
  });
});
