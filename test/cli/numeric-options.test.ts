import { PassThrough } from 'node:stream';
import t from 'tap';
import { main } from '../../lib/cli/main.js';

async function run(args: string[]): Promise<{ code: number; stderr: string }> {
  const err = new PassThrough();
  let stderr = '';
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await main(args, { stdin: new PassThrough(), stdout: new PassThrough(), stderr: err });
  return { code, stderr };
}

const NS = ['--namesrv', '127.0.0.1:1'];
// Every numeric flag of every command: a negative value (which parseArgs alone refuses as
// "argument is ambiguous" before a range check sees it), zero or a value past the range, and
// text. Each must be a usage error (exit 2) in one line that names the flag and its range.
const cases: [command: string[], flag: string, bad: string, range: RegExp][] = [
  [['produce', ...NS, '--topic', 'T'], 'count', '-1', /an integer of at least 1, got -1/],
  [['produce', ...NS, '--topic', 'T'], 'size', '-5', /an integer from 1 to 4194304, got -5/],
  [['produce', ...NS, '--topic', 'T'], 'timeout', '-1', /an integer from 1 to 3600000, got -1/],
  [['produce', ...NS, '--topic', 'T'], 'batch', '0', /an integer from 1 to 100000, got 0/],
  [['produce', ...NS, '--topic', 'T'], 'concurrency', '-3', /an integer from 1 to 10000, got -3/],
  [['consume', ...NS, '--topic', 'T', '--group', 'g'], 'limit', '-1', /an integer of at least 1, got -1/],
  [['consume', ...NS, '--topic', 'T', '--group', 'g'], 'idle-exit', '-2', /an integer from 1 to 31536000, got -2/],
  [['consume', ...NS, '--topic', 'T', '--group', 'g'], 'timeout', '-1', /an integer from 1 to 3600000, got -1/],
  [['request', ...NS, '--topic', 'T', '--body', 'x'], 'count', '-1', /an integer from 1 to 1000000, got -1/],
  [['request', ...NS, '--topic', 'T', '--body', 'x'], 'timeout', '0', /an integer from 1 to 3600000, got 0/],
  [['offsets', ...NS, '--topic', 'T', '--group', 'g'], 'timeout', '0', /an integer from 1 to 3600000, got 0/],
  [['decode', '-'], 'port', '-1', /an integer from 1 to 65535, got -1/],
  [['broker'], 'namesrv-port', '-1', /an integer from 0 to 65535, got -1/],
  [['broker'], 'broker-port', '70000', /an integer from 0 to 65535, got 70000/],
  [['broker'], 'brokers', '-1', /an integer from 1 to 64, got -1/],
  [['broker'], 'queues', '-8', /an integer from 1 to 1024, got -8/],
  [['broker'], 'segment-size', '-4096', /an integer from 4096 to 1073741824, got -4096/],
  [['bench'], 'messages', '-1', /an integer from 1 to 100000000, got -1/],
  [['bench'], 'size', '-5', /an integer from 8 to 4194304, got -5/],
  [['bench'], 'rounds', '-1', /an integer from 1 to 100, got -1/],
  [['bench'], 'handler-ms', '-1', /an integer from 0 to 60000, got -1/],
  [['bench'], 'consume-threads', '0', /an integer from 1 to 1000, got 0/],
  [['bench'], 'stall-timeout', '-1', /an integer from 1 to 3600, got -1/],
];

t.test('a numeric flag out of its range names the flag and the range (exit 2, one line)', async (t) => {
  for (const [cmd, flag, bad, range] of cases) {
    for (const args of [
      [...cmd, `--${flag}`, bad],
      [...cmd, `--${flag}=${bad}`],
    ]) {
      const r = await run(args);
      t.equal(r.code, 2, args.join(' '));
      t.equal(r.stderr.trimEnd().split('\n').length, 1, `one line: ${r.stderr}`);
      t.match(r.stderr, new RegExp(`^rocketwire ${cmd[0]}: --${flag} must be ${range.source}\\n$`), args.join(' '));
    }
    const text = await run([...cmd, `--${flag}`, 'ten']);
    t.equal(text.code, 2);
    t.match(text.stderr, new RegExp(`--${flag} must be an integer .*, got "ten"`));
  }
});

t.test('a string flag whose value starts with a dash still gets parseArgs advice', async (t) => {
  const r = await run(['produce', ...NS, '--topic', 'T', '--body', '-x']);
  t.equal(r.code, 2);
  t.match(r.stderr, /--body/);
  t.match(r.stderr, /--body=-XYZ|ambiguous/);
});

t.test('a closed stdout (EPIPE) is not a crash: the command ends with its own status', async (t) => {
  const { Writable } = await import('node:stream');
  const broken = (): InstanceType<typeof Writable> =>
    new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
  for (const args of [['--version'], ['help'], ['produce', '--help']]) {
    const out = broken();
    const code = await main(args, { stdin: new PassThrough(), stdout: out, stderr: new PassThrough() });
    // No listener of ours: an unhandled 'error' event would fail this test as an uncaught exception.
    while (!out.errored) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    t.equal(code, args[0] === 'help' || args[0] === '--version' || args[1] === '--help' ? 0 : 1, args.join(' '));
  }
});
