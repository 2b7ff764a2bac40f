import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { BrokerOptionError, startBroker } from '../../lib/broker/index.js';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

async function brokerError(args: string[]): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [bin, 'broker', '--namesrv-port', '0', '--broker-port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.on('data', () => child.kill('SIGTERM'));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  return { code, err };
}

t.test('retention flags out of range are one line on stderr and a non-zero exit', async (t) => {
  for (const [args, message] of [
    [['--file-reserved-time', '-1'], /--file-reserved-time must be a number of hours >= 0, got "-1"/],
    [['--delete-when', '25'], /deleteWhen must be hours of the day 00 to 23/],
    [['--disk-max-used-space-ratio', '101'], /--disk-max-used-space-ratio must be an integer/],
    [['--clean-resource-interval', '0'], /--clean-resource-interval must be an integer/],
  ] as const) {
    const { code, err } = await brokerError([...args]);
    t.not(code, 0, args.join(' '));
    t.equal(err.trim().split('\n').length, 1);
    t.match(err, message);
  }
});

t.test('startBroker refuses retention options out of range with BrokerOptionError', async (t) => {
  await t.rejects(startBroker({ deleteWhen: '4;x' }), BrokerOptionError);
  await t.rejects(startBroker({ fileReservedTime: Number.NaN }), BrokerOptionError);
  await t.rejects(startBroker({ diskMaxUsedSpaceRatio: 0 }), BrokerOptionError);
  const b = await startBroker({ fileReservedTime: 0.5, deleteWhen: '04;16', diskMaxUsedSpaceRatio: 90 });
  t.ok(b.broker, 'valid retention options start a broker');
  await b.close();
});
