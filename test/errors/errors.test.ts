// Every error class has a stable errorCode (unique unless listed in SHARED_CODES), the retriable
// value docs/errors.md promises, and sits in its family; the root and protocol entry points export
// no error class this file does not know.
import t from 'tap';
import * as root from '../../lib/index.js';
import * as protocol from '../../protocol/index.js';
import { ClientStateError, MQClientError } from '../../lib/client/index.js';
import { ConsumerOptionError, ConsumerStateError } from '../../lib/consumer/index.js';
import { Producer, ProducerStateError, TransactionProducer } from '../../lib/producer/index.js';
import { RemotingClient, RemotingClientClosedError, RemotingError } from '../../lib/remoting/index.js';
import { OptionError, RocketwireError, isRetriableError } from '../../protocol/errors.js';
import { RULE_CASES, RULE_CLASSES, SAMPLES, SHARED_CODES, errorClasses, type ErrorClassInfo } from './catalogue.js';

const classes = await errorClasses();

function sample(info: ErrorClassInfo): RocketwireError {
  const s = SAMPLES[info.name];
  if (!s) throw new Error(`${info.name} (${info.file}) has no entry in test/errors/catalogue.ts SAMPLES`);
  return new info.ctor(...(s.args() as never[]));
}

t.test('the sources declare the classes the catalogue knows, and nothing else', async (t) => {
  t.ok(classes.length >= 50, `${classes.length} classes found`);
  t.same(
    classes.map((c) => c.name).filter((n) => !SAMPLES[n]),
    [],
    'every class has a sample',
  );
  t.same(
    Object.keys(SAMPLES).filter((n) => !classes.some((c) => c.name === n)),
    [],
    'no sample of a class that is gone',
  );
  for (const c of classes) t.type(c.ctor, 'function', `${c.name} is exported by ${c.file}`);
});

t.test('every error class has an ERR_ code of its own and its name', async (t) => {
  const byCode = new Map<string, string[]>();
  for (const info of classes) {
    const err = sample(info);
    t.type(err, RocketwireError, `${info.name} is a RocketwireError`);
    t.equal(err.name, info.name, `${info.name}: name`);
    t.match(err.errorCode, /^ERR_[A-Z0-9_]+$/, `${info.name}: errorCode ${err.errorCode}`);
    t.type(err.retriable, 'boolean', `${info.name}: retriable is a boolean`);
    t.ok(err.message.length > 0, `${info.name}: a message`);
    byCode.set(err.errorCode, [...(byCode.get(err.errorCode) ?? []), info.name]);
  }
  for (const [code, names] of byCode) {
    if (names.length > 1)
      t.same(names.sort(), [...(SHARED_CODES.get(code) ?? [])].sort(), `${code} is shared only as SHARED_CODES says`);
  }
  t.equal(
    byCode.size,
    classes.length - [...SHARED_CODES.values()].reduce((n, v) => n + v.length - 1, 0),
    'one code per class',
  );
});

t.test("a subclass has its own code, not its parent's", async (t) => {
  const codeOf = new Map(classes.map((c) => [c.name, sample(c).errorCode]));
  for (const c of classes) {
    if (c.parent === 'Error') continue;
    t.not(codeOf.get(c.name), codeOf.get(c.parent), `${c.name} vs ${c.parent}`);
  }
});

t.test('retriable is what docs/errors.md says', async (t) => {
  for (const info of classes) t.equal(sample(info).retriable, SAMPLES[info.name]!.retriable, `${info.name}`);
  for (const [name, args, expected, what] of RULE_CASES) {
    const info = classes.find((c) => c.name === name)!;
    t.ok(RULE_CLASSES.has(name), `${name} is a rule class`);
    const err = new info.ctor(...(args() as never[]));
    t.equal(err.retriable, expected, `${name}: ${what}`);
    t.equal(isRetriableError(err), expected, `${name}: isRetriableError agrees`);
  }
  t.equal(isRetriableError(new Error('x')), false, 'a foreign error is not retriable');
  t.equal(isRetriableError('x'), false, 'nor is a thrown string');
});

t.test('every error class the entry points export is in the catalogue', async (t) => {
  for (const [entry, mod] of [
    ['rocketwire', root],
    ['rocketwire/protocol', protocol],
  ] as const) {
    for (const [name, value] of Object.entries(mod)) {
      if (typeof value !== 'function' || !(value.prototype instanceof Error || value === RocketwireError)) continue;
      t.ok(SAMPLES[name], `${entry} exports ${name}, which the catalogue has`);
      t.ok(
        value === RocketwireError || value.prototype instanceof RocketwireError,
        `${entry}: ${name} is a RocketwireError`,
      );
    }
  }
  t.ok((root as Record<string, unknown>).ProducerStateError, 'ProducerStateError is exported from the root');
  t.ok((root as Record<string, unknown>).ClientStateError, 'ClientStateError is exported from the root');
});

t.test('the two misplaced classes are under their families', async (t) => {
  const opt = new ConsumerOptionError('pullBatchSize', 'must be an integer in [1, 1024], got 0');
  t.type(opt, OptionError);
  t.match(opt, {
    option: 'pullBatchSize',
    errorCode: 'ERR_CONSUMER_OPTION',
    retriable: false,
    message: 'consumer option "pullBatchSize": must be an integer in [1, 1024], got 0',
  });
  const cause = new Error('inner');
  t.equal(new ConsumerOptionError('sql', 'bad', { cause }).cause, cause, 'cause kept');

  const client = new RemotingClient();
  await client.close();
  const closed = (() => {
    try {
      void client.invoke('127.0.0.1:1', { code: 1 } as never);
    } catch (e) {
      return e;
    }
    return null;
  })();
  t.type(closed, RemotingClientClosedError);
  t.type(closed, RemotingError, 'a RemotingError');
  t.match(
    closed,
    { addr: '127.0.0.1:1', errorCode: 'ERR_REMOTING_CLIENT_CLOSED', retriable: false },
    'but not retriable',
  );

  const state = new ConsumerStateError('RUNNING', 'cannot start a consumer in state RUNNING');
  t.type(state, ClientStateError);
  t.type(state, MQClientError);
  t.equal(state.state, 'RUNNING');
});

t.test('ProducerStateError: producer calls before start() and after shutdown()', async (t) => {
  const p = new Producer({ namesrvAddr: '127.0.0.1:1', group: 'errors_pg' });
  const before = {
    name: 'ProducerStateError',
    errorCode: 'ERR_PRODUCER_STATE',
    retriable: false,
    state: 'CREATED',
    message: 'producer errors_pg is not started: call start() first',
  };
  await t.rejects(p.send({ topic: 'T', body: 'x' }), before, 'send');
  await t.rejects(p.sendOneway({ topic: 'T', body: 'x' }), before, 'sendOneway');
  await t.rejects(p.sendBatch([{ topic: 'T', body: 'x' }]), before, 'sendBatch');
  await t.rejects(p.request({ topic: 'T', body: 'x' }, 1000), before, 'request');
  await t.rejects(p.fetchPublishMessageQueues('T'), before, 'fetchPublishMessageQueues');
  const err = await p.send({ topic: 'T', body: 'x' }).catch((e: unknown) => e);
  t.type(err, ProducerStateError);
  t.type(err, ClientStateError);
  t.notOk(err instanceof root.MessageValidationError, 'no longer a MessageValidationError');

  await p.shutdown();
  await t.rejects(
    p.send({ topic: 'T', body: 'x' }),
    { name: 'ProducerStateError', state: 'SHUTDOWN', message: 'producer errors_pg is shut down' },
    'send after shutdown',
  );
  await t.rejects(p.start(), { name: 'ProducerStateError', state: 'SHUTDOWN' }, 'start after shutdown');

  const tx = new TransactionProducer({
    namesrvAddr: '127.0.0.1:1',
    group: 'errors_tx',
    transactionListener: {
      executeLocalTransaction: () => 'COMMIT_MESSAGE',
      checkLocalTransaction: () => 'COMMIT_MESSAGE',
    },
  });
  await t.rejects(
    tx.sendMessageInTransaction({ topic: 'T', body: 'x' }),
    { name: 'ProducerStateError', state: 'CREATED' },
    'sendMessageInTransaction',
  );
});
