// `rocketwire broker --acl FILE`: a good plain_acl.yml turns access control on (an
// unsigned send is refused, a signed one served, the refusal is one stderr line); a bad one is one
// line naming the file and the entry, exit 1, before anything listens.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ResponseCode } from '../../protocol/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { sendRequest } from './helpers.js';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

function run(args: string[]): {
  stdout: Promise<string>;
  stderr: () => string;
  exited: Promise<number | null>;
  kill: () => void;
} {
  const child = spawn(process.execPath, [bin, 'broker', '--namesrv-port', '0', '--broker-port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const stdout = new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.on('exit', () => resolve(out));
  });
  return { stdout, stderr: () => err, exited, kill: () => child.kill('SIGTERM') };
}

t.test('--acl FILE: unsigned refused, signed served', async (t) => {
  const dir = t.testdir({
    'plain_acl.yml': 'accounts:\n  - accessKey: cliadmin1\n    secretKey: cli-secret-1\n    admin: true\n',
  });
  const b = run(['--acl', path.join(dir, 'plain_acl.yml')]);
  t.teardown(b.kill);
  const ready = JSON.parse(await b.stdout) as { broker: string };
  const anon = new RemotingClient({ defaultTimeoutMs: 5000 });
  t.teardown(() => anon.close());
  const refused = await anon.invoke(ready.broker, sendRequest('CliAcl', 'x'));
  t.equal(refused.code, ResponseCode.SYSTEM_ERROR);
  t.match(refused.remark, /AclException: No accessKey is configured/);
  const signed = new RemotingClient({
    defaultTimeoutMs: 5000,
    acl: { accessKey: 'cliadmin1', secretKey: 'cli-secret-1' },
  });
  t.teardown(() => signed.close());
  t.equal((await signed.invoke(ready.broker, sendRequest('CliAcl', 'x'))).code, ResponseCode.SUCCESS);
  b.kill();
  t.equal(await b.exited, 0);
  t.match(
    b.stderr(),
    /^rocketwire broker: broker-a refused SEND_MESSAGE_V2 \(310\) from 127\.0\.0\.1:\d+: No accessKey is configured/m,
  );
});

t.test('--acl with a bad file: one line naming the entry, exit 1', async (t) => {
  const dir = t.testdir({
    'bad.yml':
      'accounts:\n  - accessKey: cliuser1\n    secretKey: cli-secret-1\n    topicPerms:\n      - Orders=WRITE\n',
  });
  const b = run(['--acl', path.join(dir, 'bad.yml')]);
  t.equal(await b.exited, 1);
  t.equal(await b.stdout, '', 'no ready line');
  t.equal(
    b.stderr(),
    `rocketwire broker: ACL file ${path.join(dir, 'bad.yml')}: accounts[0].topicPerms[0]: "WRITE" is not a permission: PUB, SUB, PUB|SUB, SUB|PUB or DENY\n`,
  );
  t.ok(fs.existsSync(dir));
});

t.test('--auth USER:PASSWORD: 5.x auth on, the user made Super; unsigned and unknown signers refused', async (t) => {
  const b = run(['--auth', 'root:root-secret-1']);
  t.teardown(b.kill);
  const ready = JSON.parse(await b.stdout) as { broker: string };
  const anon = new RemotingClient({ defaultTimeoutMs: 5000 });
  t.teardown(() => anon.close());
  t.not((await anon.invoke(ready.broker, sendRequest('CliAuth', 'x'))).code, ResponseCode.SUCCESS, 'unsigned refused');
  const stranger = new RemotingClient({ defaultTimeoutMs: 5000, acl: { accessKey: 'bob', secretKey: 'bob-secret-1' } });
  t.teardown(() => stranger.close());
  t.not(
    (await stranger.invoke(ready.broker, sendRequest('CliAuth', 'x'))).code,
    ResponseCode.SUCCESS,
    'an unknown user refused',
  );
  const root = new RemotingClient({ defaultTimeoutMs: 5000, acl: { accessKey: 'root', secretKey: 'root-secret-1' } });
  t.teardown(() => root.close());
  t.equal(
    (await root.invoke(ready.broker, sendRequest('CliAuth', 'x'))).code,
    ResponseCode.SUCCESS,
    'the Super user served',
  );
  b.kill();
  t.equal(await b.exited, 0);
});

t.test('--auth without a password, or with --acl: one line, exit 2 (usage)', async (t) => {
  for (const [args, msg] of [
    [['--auth', 'root'], /--auth takes USER:PASSWORD/],
    [['--auth', 'root:x', '--acl', 'f.yml'], /--auth and --acl exclude each other/],
  ] as const) {
    const b = run([...args]);
    t.equal(await b.exited, 2, args.join(' '));
    t.match(b.stderr(), msg);
    t.equal(b.stderr().trim().split('\n').length, 1, 'one line');
  }
});
