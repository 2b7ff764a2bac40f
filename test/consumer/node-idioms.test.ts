// The handler rule and visible failures, on the embedded broker: an async handler that
// returns nothing acknowledges, eachMessage retries only what threw, an unknown status is logged
// and emitted, a dead name server fails start() (and a second start() works), a logger hears a
// broker go away and come back, health() says what a readiness probe needs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { NameServerUnavailableError } from '../../lib/client/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import type { Logger } from '../../lib/logger.js';
import { createResponse, RequestCode, ResponseCode, type RemotingCommand } from '../../protocol/index.js';
import { clockedConsumer } from './broker-spy.js';
import { brokerOffsets, freePort, produce, uniqueName, until } from './helpers.js';

/** A logger that keeps its lines. */
function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A started push consumer of `topic` from its first message, counting what it handles; pulls retried after 50 ms. */
async function countingConsumer(
  namesrvAddr: string,
  topic: string,
  logger: Logger,
): Promise<{ consumer: PushConsumer; got: () => number }> {
  const consumer = new PushConsumer({
    group: uniqueName('cg'),
    namesrvAddr,
    logger,
    pullTimeDelayMsWhenException: 50,
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic);
  let got = 0;
  await consumer.start(async () => {
    got++;
  });
  return { consumer, got: () => got };
}

t.test(
  'an async handler that returns nothing: each message handled once, nothing sent back, the offset covers all, no redelivery',
  async (t) => {
    const handled = new Map<string, number>();
    const c = await clockedConsumer(t, { messages: 20, persistOffsetIntervalMs: 1000 }, async (msgs: MessageExt[]) => {
      for (const m of msgs) handled.set(m.body.toString(), (handled.get(m.body.toString()) ?? 0) + 1);
    });
    await until(() => handled.size === 20, '20 messages handled');
    // Past the persist interval, and past every retry delay a send-back would have had.
    for (let i = 0; i < 4; i++) {
      c.clock.advance(30_000);
      await c.quiet();
    }
    t.equal(c.count(RequestCode.CONSUMER_SEND_MSG_BACK), 0, 'the broker received no CONSUMER_SEND_MSG_BACK');
    t.ok(
      [...handled.values()].every((n) => n === 1),
      'each of the 20 messages handled exactly once',
    );
    const offsets = await brokerOffsets(c.broker.namesrv, c.topic, c.group);
    t.equal(
      offsets.reduce((a, q) => a + q.committed, 0),
      20,
      'the committed offsets cover all 20',
    );
  },
);

t.test('a status typo is retried, logged at warn once and emitted each time', async (t) => {
  const logger = recordingLogger();
  const c = await clockedConsumer(t, { messages: 2 }, () => undefined);
  await c.consumer.shutdown();
  const consumer = new PushConsumer({
    group: uniqueName('cg'),
    namesrvAddr: c.broker.namesrv,
    consumeFromWhere: 'first',
    clock: c.clock,
    logger,
  });
  consumer.subscribe(c.topic);
  t.teardown(() => consumer.shutdown());
  const events: { value: string; count: number }[] = [];
  consumer.on('handlerResultInvalid', (e) => events.push(e));
  const before = c.count(RequestCode.CONSUMER_SEND_MSG_BACK);
  let calls = 0;
  await consumer.start(async () => {
    calls++;
    return 'CONSUME_SUCESS';
  });
  await until(() => calls >= 2, 'two handler calls');
  await c.quiet();
  t.equal(c.count(RequestCode.CONSUMER_SEND_MSG_BACK) - before, 2, 'both messages sent back for a retry');
  const warns = logger.lines.filter((l) => l.level === 'warn' && l.message.includes('CONSUME_SUCESS'));
  t.equal(warns.length, 1, 'one warn line for the value');
  t.match(warns[0]?.message, /not a status/);
  t.same(
    events,
    [
      { value: 'CONSUME_SUCESS', topic: c.topic, count: 1 },
      { value: 'CONSUME_SUCESS', topic: c.topic, count: 1 },
    ],
    'an event per call',
  );
});

t.test('eachMessage: a throw retries that message only', async (t) => {
  const seen: string[] = [];
  let failed = false;
  const c = await clockedConsumer(t, { messages: 6, consumeMessageBatchMaxSize: 1 }, () => undefined);
  await c.consumer.shutdown();
  const consumer = new PushConsumer({
    group: uniqueName('cg'),
    namesrvAddr: c.broker.namesrv,
    consumeFromWhere: 'first',
    clock: c.clock,
  });
  consumer.subscribe(c.topic);
  t.teardown(() => consumer.shutdown());
  const before = c.count(RequestCode.CONSUMER_SEND_MSG_BACK);
  await consumer.start({
    eachMessage: async (m) => {
      seen.push(m.body.toString());
      if (m.body.toString() === 'message-3' && !failed) {
        failed = true;
        throw new Error('not now');
      }
    },
  });
  await until(() => seen.length >= 6, 'six messages handled');
  await c.quiet();
  t.equal(c.count(RequestCode.CONSUMER_SEND_MSG_BACK) - before, 1, 'one message sent back');
  // the retry's delay (level 3, 10 s) on the shared clock
  for (let i = 0; i < 5 && seen.length < 7; i++) {
    c.clock.advance(10_000);
    await c.quiet();
  }
  await until(() => seen.length >= 7, 'the retried message');
  t.same(seen.filter((b) => b === 'message-3').length, 2, 'the message that threw came back once');
  t.same(new Set(seen).size, 6, 'the others were handled once');
  t.equal(seen.length, 7);
});

t.test(
  'start() against a dead name server rejects naming it, stays CREATED, and a second start() works once it is up',
  async (t) => {
    const port = await freePort();
    const addr = `127.0.0.1:${port}`;
    const topic = uniqueName('T');
    const consumer = new PushConsumer({
      group: uniqueName('cg'),
      namesrvAddr: addr,
      logger: false,
      connectTimeoutMs: 500,
      consumeFromWhere: 'first',
    });
    consumer.subscribe(topic);
    const err = await consumer
      .start(async () => undefined)
      .then(
        () => null,
        (e: unknown) => e,
      );
    t.ok(err instanceof NameServerUnavailableError, 'NameServerUnavailableError');
    t.match((err as Error).message, addr, 'the error names the address');
    t.equal((err as NameServerUnavailableError).retriable, true, 'retriable');
    t.equal((err as NameServerUnavailableError).errorCode, 'ERR_NAMESRV_UNAVAILABLE');
    t.equal(consumer.state, 'CREATED', 'back in its initial state');
    const broker = await startBroker({ queues: 2, namesrvPort: port });
    t.teardown(() => broker.close());
    await produce(broker.namesrv, topic, 1);
    let got = 0;
    await consumer.start(async () => {
      got++;
    });
    t.teardown(() => consumer.shutdown());
    t.equal(consumer.state, 'RUNNING');
    await until(() => got === 1, 'the message, after the second start()');
    const h = consumer.health();
    t.equal(h.ready, true, 'health() says ready');
    t.equal(h.nameServer.lastAnswer?.addr, addr);
  },
);

t.test(
  "startWithoutNameServer keeps Java's behaviour: start() resolves, the failures are logged and emitted",
  async (t) => {
    const port = await freePort();
    const logger = recordingLogger();
    const consumer = new PushConsumer({
      group: uniqueName('cg'),
      namesrvAddr: `127.0.0.1:${port}`,
      logger,
      startWithoutNameServer: true,
      connectTimeoutMs: 500,
    });
    consumer.subscribe(uniqueName('T'));
    await consumer.start(async () => undefined);
    t.teardown(() => consumer.shutdown());
    t.equal(consumer.state, 'RUNNING');
    t.ok(
      logger.lines.some((l) => l.level === 'warn' && l.message.includes(`127.0.0.1:${port}`)),
      'a warn line names the name server',
    );
    t.equal(consumer.health().ready, false, 'not ready while no name server answered');
  },
);

t.test('a logger hears a broker stop answering (warn) and come back (info)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-idioms-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const namesrvPort = await freePort();
  const brokerPort = await freePort();
  let broker = await startBroker({ queues: 1, namesrvPort, brokerPort, dataDir: dir });
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 1);
  const logger = recordingLogger();
  const { consumer, got } = await countingConsumer(broker.namesrv, topic, logger);
  t.teardown(async () => {
    await consumer.shutdown();
    await broker.close();
  });
  await until(() => got() === 1, 'the first message');
  await broker.close();
  const brokerWarn = (l: { level: string; message: string }): boolean =>
    l.level === 'warn' && l.message.includes(': broker ') && l.message.includes('is not answering');
  await until(() => logger.lines.some(brokerWarn), 'a warn line for the broker');
  broker = await startBroker({ queues: 1, namesrvPort, brokerPort, dataDir: dir });
  await until(
    () => logger.lines.some((l) => l.level === 'info' && l.message.includes('answers again')),
    'an info line when it is back',
    20_000,
  );
  const warn = logger.lines.find(brokerWarn)!;
  t.match(warn.message, `127.0.0.1:${brokerPort}`, 'the warn names the address');
  t.equal(logger.lines.filter(brokerWarn).length, 1, 'one warn line for the episode');
});

t.test(
  'a broker that answers pulls with SYSTEM_BUSY is logged as answering with an error, not as not answering',
  async (t) => {
    const broker = await startBroker({ queues: 1 });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    await produce(broker.namesrv, topic, 1);
    const processors = broker.instances[0]!.server['processors'];
    const pull = processors.get(RequestCode.PULL_MESSAGE)!;
    let busy = 2;
    processors.set(RequestCode.PULL_MESSAGE, (req: RemotingCommand, conn) => {
      if (busy-- > 0)
        return createResponse(req, ResponseCode.SYSTEM_BUSY, {
          remark: '[OVERLOAD]system busy, start flow control for a while',
        });
      return pull(req, conn);
    });
    const logger = recordingLogger();
    const { consumer, got } = await countingConsumer(broker.namesrv, topic, logger);
    t.teardown(() => consumer.shutdown());
    await until(() => got() === 1, 'the message, once the broker is no longer busy');
    const warns = logger.lines.filter((l) => l.level === 'warn' && l.message.includes(': broker '));
    t.equal(warns.length, 1, `one warn line: ${warns.map((l) => l.message).join(' | ')}`);
    t.match(warns[0]!.message, /answered PULL_MESSAGE with an error: .*SYSTEM_BUSY/, 'it says the broker answered');
    t.notMatch(warns[0]!.message, /is not answering/);
  },
);
