import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { client } from './helpers.js';

// rocketwire broker --enable-property-filter: the flag reaches the broker (CHECK_CLIENT_CONFIG of
// a SQL92 subscription is accepted; without the flag it is refused, as Apache's default).

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

async function checkWith(args: string[]): Promise<{ code: number; remark: string | null | undefined }> {
  const child = spawn(process.execPath, [bin, 'broker', '--namesrv-port', '0', '--broker-port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const ready = await new Promise<{ broker: string }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as { broker: string });
      });
      child.on('exit', (code) => reject(new Error(`broker exited with ${code}`)));
    });
    const c = client();
    try {
      const subscriptionData = {
        classFilterMode: false,
        codeSet: [],
        expressionType: 'SQL92',
        subString: 'a > 1',
        subVersion: 1,
        tagsSet: [],
        topic: 'T',
      };
      const res = await c.invoke(
        ready.broker,
        createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
          body: Buffer.from(JSON.stringify({ clientId: 'x@y', group: 'g', subscriptionData })),
        }),
      );
      return { code: res.code, remark: res.remark };
    } finally {
      await c.close();
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

t.test('broker --enable-property-filter serves SQL92; without it the broker refuses', async (t) => {
  t.match(await checkWith(['--enable-property-filter']), { code: ResponseCode.SUCCESS });
  // 'a > 1' is three nodes
  t.match(await checkWith(['--enable-property-filter', '--sql-max-nodes', '2']), {
    code: ResponseCode.SUBSCRIPTION_PARSE_FAILED,
    remark: /3 nodes exceed maxNodes \(2\).*sqlMaxNodes/,
  });
  t.match(await checkWith([]), {
    code: ResponseCode.SYSTEM_ERROR,
    remark: 'The broker does not support consumer to filter message by SQL92',
  });
});
