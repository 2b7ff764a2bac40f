// Store damage through the `rocketwire broker` command: a hostile offset commit, a garbage offsets
// file, and a damaged commit log, with the broker's real stderr.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { client, sendRequest } from './helpers.js';
import { until } from '../support/until.js';
import { garbage } from './store-damage-helpers.js';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

interface Run {
  child: ChildProcess;
  broker: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function runBroker(dir: string): Promise<Run> {
  const child = spawn(
    process.execPath,
    [bin, 'broker', '--namesrv-port', '0', '--broker-port', '0', '--data', dir, '--queues', '4'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0)
        resolve({
          child,
          broker: (JSON.parse(out.slice(0, nl)) as { broker: string }).broker,
          stderr: () => err,
          exited,
        });
    });
    child.on('exit', (code) => reject(Object.assign(new Error(`broker exited with ${code}`), { code, stderr: err })));
  });
}

function commit(group: string, offset: number): ReturnType<typeof createRequest> {
  return createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
    extFields: { consumerGroup: group, topic: 'T', queueId: '0', commitOffset: String(offset) },
  });
}
function query(group: string): ReturnType<typeof createRequest> {
  return createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
    extFields: { consumerGroup: group, topic: 'T', queueId: '0' },
  });
}

t.test(
  'UPDATE_CONSUMER_OFFSET with group "evil,5:" (the issue): refused at the boundary, and every group keeps its offset across restarts',
  async (t) => {
    // The group names that broke the old file rewrite are now refused before they reach the file
    // (resource-names.ts); the file codec's own handling of such keys is in
    // test/protocol/offset-files-hostile.test.ts. Names with every character a group may hold
    // still round-trip through the file across restarts.
    const dir = t.testdir({});
    const hostile = ['evil,5:', 'a"b', 'x}{'];
    const groups = ['good1', '%|x_-9', 'good2'];
    const first = await runBroker(dir);
    t.teardown(() => first.child.kill('SIGKILL'));
    const c = client();
    t.teardown(() => c.close());
    // messages first, so that the committed offsets lie inside the queue (else start-up names them)
    for (let i = 0; i < 20; i++)
      t.equal((await c.invoke(first.broker, sendRequest('T', `m${i}`, { queueId: 0 }))).code, ResponseCode.SUCCESS);
    for (const [i, g] of groups.entries())
      t.equal((await c.invoke(first.broker, commit(g, 10 + i))).code, ResponseCode.SUCCESS, g);
    for (const g of hostile) {
      const r = await c.invoke(first.broker, commit(g, 5));
      t.equal(r.code, ResponseCode.INVALID_PARAMETER, `${g}: refused`);
      t.match(r.remark, /consumerGroup/, `${g}: the remark names the field`);
    }
    first.child.kill('SIGTERM');
    t.equal(await first.exited, 0);
    for (let round = 0; round < 2; round++) {
      const next = await runBroker(dir);
      t.teardown(() => next.child.kill('SIGKILL'));
      for (const [i, g] of groups.entries()) {
        const r = await c.invoke(next.broker, query(g));
        t.equal(r.extFields?.offset, String(10 + i), `restart ${round + 1}: ${g}`);
      }
      t.equal(next.stderr(), '', 'nothing to repair');
      next.child.kill('SIGTERM');
      t.equal(await next.exited, 0);
    }
  },
);

t.test(
  'a garbage consumerOffset.json and no .bak: the command exits non-zero with one line and leaves the file',
  async (t) => {
    const dir = t.testdir({ config: { 'consumerOffset.json': '{"offsetTable":{"T@evil' } });
    const err = (await runBroker(dir).then(
      () => null,
      (e: unknown) => e,
    )) as { code: number; stderr: string } | null;
    t.ok(err, 'the broker did not start');
    t.not(err!.code, 0, 'non-zero exit');
    t.match(err!.stderr, /^rocketwire broker: .*consumerOffset\.json cannot be read .*refusing to start/);
    t.equal(err!.stderr.trim().split('\n').length, 1, 'one line, no stack trace');
    t.equal(fs.readFileSync(path.join(dir, 'config', 'consumerOffset.json'), 'utf8'), '{"offsetTable":{"T@evil');
  },
);

t.test('a damaged commit log: the restarted broker says on stderr what it found and did', async (t) => {
  const dir = t.testdir({});
  const first = await runBroker(dir);
  t.teardown(() => first.child.kill('SIGKILL'));
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 50; i++)
    t.equal(
      (await c.invoke(first.broker, sendRequest('Dmg', `message-${i}-${'z'.repeat(100)}`, { queueId: 1 }))).code,
      ResponseCode.SUCCESS,
    );
  first.child.kill('SIGTERM');
  await first.exited;
  const seg = path.join(dir, 'commitlog', '00000000000000000000');
  const fd = fs.openSync(seg, 'r+');
  fs.writeSync(fd, garbage(64), 0, 64, Math.floor(fs.statSync(seg).size / 2));
  fs.closeSync(fd);
  const second = await runBroker(dir);
  t.teardown(() => second.child.kill('SIGKILL'));
  // stderr and stdout are separate pipes: the lines may arrive after the ready line
  await until(() => /recovery: indexed/.test(second.stderr()), 'the recovery line on stderr', 3000);
  t.match(
    second.stderr(),
    /rocketwire broker: commit log .*damaged bytes at offset \d+ .*kept every intact record after them/,
  );
  t.match(second.stderr(), /rocketwire broker: recovery: indexed/);
  const max = await c.invoke(
    second.broker,
    createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic: 'Dmg', queueId: '1' } }),
  );
  t.equal(max.extFields?.offset, '50', 'queue offsets kept');
  second.child.kill('SIGTERM');
  await second.exited;
});
