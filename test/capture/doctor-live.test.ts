import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { heartbeatRequest, pullRequest, sendRequest } from '../broker/helpers.js';
import { diagnoseFile, found, liveSkip, startCapture } from './doctor-capture.js';
import { runCli } from '../cli/run-in-process.js';
import { ManualClock } from '../../lib/clock.js';
import { spyOnBroker } from '../consumer/broker-spy.js';
import { until } from '../support/until.js';

// The doctor on captures of faults really happening: rocketwire's producer, push consumer, admin
// client and remoting client against the embedded broker, recorded with tcpdump on loopback. One
// broker for the file; a clean capture first (the doctor must find nothing), then one capture of
// several faults, each made by the group of its own name.

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

t.test('the doctor on real captures of the embedded broker', { skip: liveSkip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rocketwire-doctor-live-'));
  // DOCTOR_KEEP_CAPTURES=1 leaves the captures for a look with rocketwire decode.
  if (!process.env.DOCTOR_KEEP_CAPTURES) t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  else t.comment(`captures in ${dir}`);
  const broker = await startBroker({ queues: 1 });
  // One teardown, in order: clients before the broker they would otherwise wait for.
  const closers: (() => Promise<unknown>)[] = [];
  t.teardown(async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
    await broker.close();
  });
  const ports = [broker.namesrv, broker.broker].map((a) => Number(a.split(':')[1]));
  // The spy reads its clock only to stamp what it records.
  const seen = spyOnBroker(broker, new ManualClock(0));
  /** UPDATE_CONSUMER_OFFSET requests of `group` the broker got (at `offset`). */
  const commits = (group: string, offset?: number): number =>
    seen.filter(
      (s) =>
        s.code === RequestCode.UPDATE_CONSUMER_OFFSET &&
        s.ext.consumerGroup === group &&
        (offset === undefined || Number(s.ext.commitOffset) === offset),
    ).length;
  const namesrvAddr = broker.namesrv;
  const admin = new AdminClient({ namesrvAddr });
  closers.push(() => admin.close());
  const topics = ['TClean', 'TLoop', 'TStall', 'TDup', 'TStorm', 'TErr'];
  for (const topic of topics) await admin.createOrUpdateTopic({ topic, readQueueNums: 1, writeQueueNums: 1 });
  await admin.createOrUpdateTopic({ topic: 'TReadOnly', readQueueNums: 1, writeQueueNums: 1, perm: 4 });
  const producer = new Producer({ namesrvAddr, group: 'PG' });
  await producer.start();
  closers.push(() => producer.shutdown());
  const send = async (topic: string, n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await producer.send({ topic, body: `${topic}-${i}` });
  };
  const consumers: PushConsumer<false>[] = [];
  closers.push(async () => {
    for (const c of consumers) await c.shutdown();
  });
  const consumer = (
    group: string,
    topic: string,
    o: Omit<Partial<ConstructorParameters<typeof PushConsumer>[0]>, 'orderly'> = {},
  ): PushConsumer<false> => {
    const c = new PushConsumer<false>({
      consumerGroup: group,
      namesrvAddr,
      consumeFromWhere: 'first',
      persistOffsetIntervalMs: 200,
      ...o,
      orderly: false,
    });
    c.subscribe(topic, '*');
    consumers.push(c);
    return c;
  };
  // Everything the topics need is known before the captures begin: routes, the producer's connections.
  await send('TClean', 1);

  await t.test('a clean capture: a producer and a consumer doing their work; nothing found', async (t) => {
    const file = join(dir, 'clean.pcap');
    const cap = await startCapture(file, ports);
    const got = new Set<string>(); // msgIds
    const c = consumer('GClean', 'TClean');
    await c.start((msgs: MessageExt[]) => {
      for (const m of msgs) got.add(m.msgId);
      return 'CONSUME_SUCCESS';
    });
    await send('TClean', 20);
    await until(
      () => got.size === 21,
      () => `21 messages (got ${got.size})`,
    );
    await until(() => commits('GClean') >= 3, 'offsets flushed a few times');
    await c.shutdown();
    await cap.stop();
    const d = diagnoseFile(file, ports);
    t.ok(d.frames > 40, `${d.frames} frames`);
    t.same(d.findings, [], 'default thresholds');
    t.same(diagnoseFile(file, ports, TIGHT).findings, [], 'the thresholds of the fault capture below');
    const r = await runCli(['decode', '--doctor', '--port', String(ports[0]), '--port', String(ports[1]), file]);
    t.equal(r.code, 0, 'exit 0');
    t.match(r.stdout, /^no problems found in \d+ frames\n$/);
  });

  await t.test('a capture of faults: each found, with its evidence', async (t) => {
    const file = join(dir, 'faults.pcap');
    const cap = await startCapture(file, ports);

    // long-poll-loop: a consumer that asks the broker to hold its pulls 0 ms spins on an empty queue.
    const loop = consumer('GLoop', 'TLoop', { brokerSuspendMaxTimeMs: 0 });
    await loop.start(() => 'CONSUME_SUCCESS');
    await until(() => loop.stats().pulls > 30, 'a spinning consumer');
    await loop.shutdown();

    // lag-growing and flow-control-stall: a handler blocked on one message while the queue fills.
    await send('TStall', 12);
    const release: (() => void)[] = [];
    const stall = consumer('GStall', 'TStall', {
      pullBatchSize: 4,
      pullThresholdForQueue: 4,
      consumeThreadMin: 1,
      consumeThreadMax: 1,
    });
    let handled = 0;
    await stall.start(async (msgs: MessageExt[]) => {
      handled++;
      if (msgs[0]!.queueOffset >= 2) await new Promise<void>((r) => release.push(r));
      return 'CONSUME_SUCCESS';
    });
    await until(() => release.length > 0, 'the handler to block');
    for (let i = 0; i < 6; i++) {
      await send('TStall', 1);
      await sleep(250);
    }

    // offset-backwards and duplicate-delivery: the group consumes 4 messages, its offset is reset
    // to the first one (rocketwire admin offset reset), and a new member gets them all again.
    await send('TDup', 4);
    const dupSeen: string[] = [];
    const d1 = consumer('GDup', 'TDup');
    await d1.start((msgs: MessageExt[]) => {
      for (const m of msgs) dupSeen.push(m.msgId);
      return 'CONSUME_SUCCESS';
    });
    await until(() => dupSeen.length === 4, 'the first 4 deliveries');
    await until(() => commits('GDup', 4) > 0, 'the commit of the 4');
    await d1.shutdown();
    await admin.resetOffset('GDup', 'TDup', { to: 'first' });
    const d2 = consumer('GDup', 'TDup');
    await d2.start((msgs: MessageExt[]) => {
      for (const m of msgs) dupSeen.push(m.msgId);
      return 'CONSUME_SUCCESS';
    });
    await until(() => dupSeen.length === 8, 'the 4 again');
    const committed = commits('GDup', 4);
    await until(() => commits('GDup', 4) > committed, 'the commit of the 4 again');
    await d2.shutdown();

    // rebalance-storm: members of one group joining and leaving, one after another.
    const stay = consumer('GStorm', 'TStorm');
    await stay.start(() => 'CONSUME_SUCCESS');
    for (let i = 0; i < 3; i++) {
      const c = consumer('GStorm', 'TStorm');
      await c.start(() => 'CONSUME_SUCCESS');
      await sleep(100);
      await c.shutdown();
      await sleep(100);
    }

    // error-response: requests the broker refuses, sent with rocketwire's remoting client.
    const rc = new RemotingClient({ defaultTimeoutMs: 3000 });
    closers.push(() => rc.close());
    const answers: number[] = [];
    answers.push((await rc.invoke(broker.broker, sendRequest('TReadOnly', 'x'))).code);
    answers.push(
      (await rc.invoke(broker.broker, heartbeatRequest('errclient@1', 'GErr', [{ topic: 'TErr', subVersion: 1 }])))
        .code,
    );
    answers.push(
      (await rc.invoke(broker.broker, pullRequest('TErr', { group: 'GErr', offset: 500, sysFlag: 0, subVersion: 1 })))
        .code,
    );
    // The last pull of this client on the queue: a refusal that a next pull heals is transient (transientRefusalHealMs).
    answers.push(
      (await rc.invoke(broker.broker, pullRequest('TErr', { group: 'GErr', subVersion: 99, sysFlag: 0 }))).code,
    );
    answers.push(
      (
        await rc.invoke(
          broker.broker,
          createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
            extFields: { consumerGroup: 'GErr', topic: 'TNowhere', queueId: '0', commitOffset: '1' },
          }),
        )
      ).code,
    );
    t.same(
      answers,
      [
        ResponseCode.NO_PERMISSION,
        0,
        ResponseCode.PULL_OFFSET_MOVED,
        ResponseCode.SUBSCRIPTION_NOT_LATEST,
        ResponseCode.TOPIC_NOT_EXIST,
      ],
      'the broker refused them',
    );

    await sleep(200);
    await cap.stop();
    for (const r of release) r();
    t.ok(handled > 0);
    t.ok(statSync(file).size < 4 * 1024 * 1024, 'the capture stays small');

    const { findings } = diagnoseFile(file, ports, TIGHT);
    const byCheck = (check: string, group: string) =>
      findings.find((f) => f.check === check && f.evidence.group === group);
    t.same(
      found(findings),
      [
        'duplicate-delivery GDup',
        'error-response GErr',
        'error-response GErr',
        'error-response GErr',
        'error-response pg',
        'flow-control-stall GStall',
        'lag-growing GStall',
        'long-poll-loop GLoop',
        'long-poll-loop GLoop',
        'offset-backwards GDup',
        'rebalance-storm GStorm',
      ],
      'each fault found, nothing else',
    );
    t.same(
      findings
        .filter((f) => f.check === 'long-poll-loop')
        .map((f) => f.evidence.queue)
        .sort(),
      ['%RETRY%GLoop/broker-a/0', 'TLoop/broker-a/0'],
      'the topic and the retry topic spin',
    );
    t.match(byCheck('long-poll-loop', 'GLoop'), { severity: 'warning', meaning: /held at most 0 ms/ });
    t.match(byCheck('lag-growing', 'GStall'), {
      severity: 'error',
      summary:
        /committed offset of group GStall on TStall\/broker-a\/0 stayed at 2 for .* while the queue held messages up to 17/,
    });
    t.match(byCheck('flow-control-stall', 'GStall'), {
      summary: /still paused when the capture ended/,
      evidence: { queue: 'TStall/broker-a/0' },
    });
    t.match(byCheck('offset-backwards', 'GDup'), {
      summary:
        /went backwards once \(first 4 → 0: a pull from offset 0 after 4 was committed; the capture shows an offset reset \(INVOKE_BROKER_TO_RESET_OFFSET\) before it\)/,
    });
    t.match(byCheck('duplicate-delivery', 'GDup'), {
      summary: /^4 messages delivered again to group GDup/,
      evidence: { count: 4 },
    });
    // Three members joining and leaving: six changes (fewer only if two came within 50 ms).
    t.ok((byCheck('rebalance-storm', 'GStorm')?.evidence.count ?? 0) >= 5, 'the storm counts the changes');
    const codes = findings
      .filter((f) => f.check === 'error-response')
      .map((f) => f.evidence.code)
      .sort((a, b) => a! - b!);
    t.same(codes, [
      ResponseCode.NO_PERMISSION,
      ResponseCode.TOPIC_NOT_EXIST,
      ResponseCode.PULL_OFFSET_MOVED,
      ResponseCode.SUBSCRIPTION_NOT_LATEST,
    ]);
    for (const f of findings) {
      t.ok(
        f.evidence.firstMs > Date.now() - 120_000 && f.evidence.lastMs >= f.evidence.firstMs,
        `${f.check}: capture times`,
      );
      t.ok(f.meaning.length > 40, `${f.check}: a meaning`);
    }
    t.comment(findings.map((f) => `${f.severity} ${f.check}: ${f.summary}`).join('\n'));
  });
});

/** Thresholds for captures of seconds: a stall of 1 s is a stall here. */
const TIGHT = { lagStallMs: 1000, flowControlGapMs: 500, rebalanceBurstMs: 50 };
