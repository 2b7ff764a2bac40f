import t from 'tap';
import { BrokerError } from '../../lib/remoting/index.js';
import { brokerPortHint } from '../../lib/cli/broker-port-hint.js';
import { RequestCode, ResponseCode } from '../../protocol/index.js';
import { uniqueName, withBroker } from '../consumer/helpers.js';
import { runCli } from './run-in-process.js';

t.test('a broker port given as --namesrv: every command says so in one line', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const addr = broker.broker;
  const topic = uniqueName('T');
  const runs: string[][] = [
    ['produce', '--topic', topic],
    ['consume', '--topic', topic, '--group', 'g', '--limit', '1'],
    ['consume', '--mode', 'lite', '--topic', topic, '--group', 'g', '--limit', '1'],
    ['request', '--topic', topic, '--body', 'x'],
    ['offsets', '--topic', topic, '--group', 'g'],
    ['admin', 'topic', 'list'],
    ['admin', 'topic', 'route', '--topic', topic],
  ];
  for (const args of runs) {
    const r = await runCli([...args, '--namesrv', addr, '--timeout', '2000']);
    t.equal(r.code, 1, args.join(' '));
    const lines = r.stderr.trimEnd().split('\n');
    t.equal(lines.length, 1, `one line: ${r.stderr}`);
    t.match(lines[0], `rocketwire ${args[0]}: ${addr} answered like a broker: is this the broker port? (`);
    t.notMatch(r.stderr, /\n\s+at /);
  }
});

t.test('the hint names the addresses when there are several, and only that answer gets it', async (t) => {
  const notSupported = new BrokerError(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, ' request type 105 not supported', {
    addr: 'name server',
    requestCode: RequestCode.GET_ROUTEINFO_BY_TOPIC,
  });
  t.match(
    brokerPortHint(notSupported, 'a:1;b:2')?.message,
    /^one of a:1;b:2 answered like a broker: is one of them a broker port\? \(GET_ROUTEINFO_BY_TOPIC got REQUEST_CODE_NOT_SUPPORTED/,
  );
  t.match(brokerPortHint(new Error('wrapped', { cause: notSupported }), 'a:1')?.message, /^a:1 answered like a broker/);
  t.equal(
    brokerPortHint(
      new BrokerError(ResponseCode.TOPIC_NOT_EXIST, 'no route', { addr: 'name server', requestCode: 105 }),
      'a:1',
    ),
    null,
  );
  // a broker refusing a broker request is a broker's own answer
  t.equal(
    brokerPortHint(
      new BrokerError(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, 'x', {
        addr: 'a:1',
        requestCode: RequestCode.POP_MESSAGE,
      }),
      'a:1',
    ),
    null,
  );
});
