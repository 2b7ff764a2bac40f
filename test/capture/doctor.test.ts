import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CaptureDecoder } from '../../lib/capture/index.js';
import { diagnose, DoctorOptionError, resolveDoctorOptions, type Finding } from '../../lib/capture/doctor/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { runCli } from '../cli/run-in-process.js';
import { storedMessages } from './build-pcap.js';
import { Conn, diagnoseConns, pcapOf, pullExt, T0 } from './doctor-scene.js';

const ms = (sec: number): number => (T0 + sec) * 1000;
const checks = (fs: Finding[]): string[] => fs.map((f) => f.check);

/** A consumer that pulls queue 0 of T, finds 2 messages each time and commits as it goes: what healthy traffic looks like. */
function healthyConsumer(c: Conn, from = 0, rounds = 5, startSec = 0): number {
  let offset = from;
  let sec = startSec;
  c.heartbeat(sec);
  for (let i = 0; i < rounds; i++) {
    sec += 0.01;
    c.call(sec, RequestCode.PULL_MESSAGE, pullExt({ offset, commit: offset }), sec + 0.002, {
      ext: {
        nextBeginOffset: String(offset + 2),
        minOffset: '0',
        maxOffset: String(offset + 2),
        suggestWhichBrokerId: '0',
      },
      body: storedMessages(2, { topic: 'T', firstOffset: offset }),
    });
    offset += 2;
    sec += 0.01;
  }
  // Caught up: the next pull is held 15 s and comes back empty, as long polling does.
  c.call(sec + 0.01, RequestCode.PULL_MESSAGE, pullExt({ offset, commit: offset }), sec + 15.01, {
    code: ResponseCode.PULL_NOT_FOUND,
    ext: { nextBeginOffset: String(offset), minOffset: '0', maxOffset: String(offset), suggestWhichBrokerId: '0' },
  });
  c.send(
    sec + 15.02,
    createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
      opaque: c.newOpaque(),
      oneway: true,
      extFields: { consumerGroup: 'cg', topic: 'T', queueId: '0', commitOffset: String(offset) },
    }),
  );
  return sec + 15.02;
}

t.test('a healthy consumer: nothing found', async (t) => {
  const c = new Conn();
  healthyConsumer(c);
  t.same(diagnoseConns([c]), []);
});

t.test('long-poll-unanswered: a held pull that never comes back, and one still young at the end', async (t) => {
  const c = new Conn();
  const lost = c.call(0, RequestCode.PULL_MESSAGE, pullExt({ offset: 4 }), null);
  for (let s = 1; s <= 21; s += 5) c.heartbeat(s);
  c.call(20, RequestCode.PULL_MESSAGE, pullExt({ offset: 9, queueId: 1 }), null); // 1 s before the end: may still come back
  const fs = diagnoseConns([c]);
  t.same(checks(fs), ['long-poll-unanswered']);
  t.match(fs[0], {
    severity: 'error',
    summary:
      /PULL_MESSAGE on T\/broker-a\/0 \(group cg\) never returned: it was sent 21\.0 s before the capture ended \(suspend 15\.0 s\)/,
    evidence: {
      firstMs: ms(0),
      flow: c.flow,
      opaque: lost.opaque,
      queue: 'T/broker-a/0',
      group: 'cg',
      code: 11,
      count: 1,
    },
  });
  t.same(diagnoseConns([c], { longPollMarginMs: 7000 }), [], 'within the margin: no finding');
});

t.test('long-poll-loop: empty answers at once, with the likely cause in the meaning', async (t) => {
  const c = new Conn();
  for (let i = 0; i < 12; i++) {
    c.call(i * 0.01, RequestCode.PULL_MESSAGE, pullExt({ offset: 7, suspendMs: 0 }), i * 0.01 + 0.002, {
      code: ResponseCode.PULL_NOT_FOUND,
      ext: { nextBeginOffset: '7', minOffset: '0', maxOffset: '7' },
    });
  }
  const fs = diagnoseConns([c]);
  t.same(checks(fs), ['long-poll-loop']);
  t.match(
    fs[0]!.summary,
    /pulls on T\/broker-a\/0 \(group cg\) returned at once with no messages 12 times in a row .*\(PULL_NOT_FOUND 12\)/,
  );
  t.match(fs[0]!.meaning, /held at most 0 ms \(suspendTimeoutMillis/);
  t.equal(fs[0]!.evidence.count, 12);
  t.same(diagnoseConns([c], { longPollLoopCount: 13 }), [], 'a shorter run than the threshold');

  const n = new Conn();
  for (let i = 0; i < 10; i++) {
    n.call(i * 0.01, RequestCode.PULL_MESSAGE, pullExt({ offset: 7, suspendMs: null }), i * 0.01 + 0.002, {
      code: ResponseCode.PULL_NOT_FOUND,
      ext: { nextBeginOffset: '7', maxOffset: '7' },
    });
  }
  t.match(diagnoseConns([n])[0]!.meaning, /FLAG_SUSPEND is not set/);
});

t.test('lag-growing and offset-backwards: commits stuck behind a growing queue, then one lower', async (t) => {
  const c = new Conn();
  const producer = new Conn();
  for (let i = 0; i < 6; i++) {
    // The producer keeps sending to queue 0; the consumer keeps committing 5.
    producer.call(i * 4, RequestCode.SEND_MESSAGE_V2, { a: 'pg', b: 'T', e: '0' }, i * 4 + 0.002, {
      ext: { msgId: 'X', queueId: '0', queueOffset: String(20 + i * 10) },
    });
    c.send(
      i * 4 + 1,
      createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        opaque: c.newOpaque(),
        oneway: true,
        extFields: { consumerGroup: 'cg', topic: 'T', queueId: '0', commitOffset: '5' },
      }),
    );
  }
  c.send(
    30,
    createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
      opaque: c.newOpaque(),
      oneway: true,
      extFields: { consumerGroup: 'cg', topic: 'T', queueId: '0', commitOffset: '3' },
    }),
  );
  const fs = diagnoseConns([c, producer]);
  t.same(checks(fs), ['lag-growing', 'offset-backwards']);
  t.match(fs[0], {
    severity: 'error',
    summary:
      /committed offset of group cg on T\/\/0 stayed at 3 for 29\.0 s \(7 commits\) while the queue held messages up to 70: lag 18 → 68/,
    evidence: { firstMs: ms(1), lastMs: ms(30), flow: c.flow, group: 'cg', queue: 'T//0', count: 7 },
  });
  t.match(fs[1], {
    severity: 'warning',
    summary: /went backwards once \(first 5 → 3: a commit of 3 after 5\)/,
    evidence: { firstMs: ms(30), count: 1, code: RequestCode.UPDATE_CONSUMER_OFFSET },
  });
  t.same(
    checks(diagnoseConns([c, producer], { lagStallMs: 30000 })),
    ['offset-backwards'],
    'a shorter stall than the threshold',
  );
});

t.test(
  'offset-backwards: a pull below the committed offset after a reset; SUBSCRIPTION_NOT_EXIST after UNREGISTER_CLIENT is a consumer leaving',
  async (t) => {
    const a = new Conn();
    a.call(0, RequestCode.PULL_MESSAGE, pullExt({ offset: 8, commit: 8 }), 0.01, {
      code: ResponseCode.PULL_NOT_FOUND,
      ext: { nextBeginOffset: '8', maxOffset: '8' },
    });
    const held = a.call(0.5, RequestCode.PULL_MESSAGE, pullExt({ offset: 8, commit: 8, queueId: 1 }), null);
    a.send(
      0.6,
      createRequest(RequestCode.UNREGISTER_CLIENT, {
        opaque: a.newOpaque(),
        extFields: { clientID: 'c1', consumerGroup: 'cg' },
      }),
    );
    a.answer(0.7, createRequest(RequestCode.HEART_BEAT, { opaque: 900 })); // anything from the broker, then the held pull's answer
    a.answer(0.8, {
      ...createRequest(0),
      flag: 1,
      code: ResponseCode.SUBSCRIPTION_NOT_EXIST,
      opaque: held.opaque,
      remark: "the consumer's group info not exist",
    });
    const admin = new Conn();
    admin.call(
      1,
      RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
      { topic: 'T', group: 'cg', timestamp: '0', isForce: 'true' },
      1.01,
    );
    const b = new Conn();
    b.call(2, RequestCode.PULL_MESSAGE, pullExt({ offset: 0 }), 2.01, {
      ext: { nextBeginOffset: '2', maxOffset: '8' },
      body: storedMessages(2, { topic: 'T' }),
    });
    const fs = diagnoseConns([a, admin, b]);
    t.same(checks(fs), ['offset-backwards']);
    t.match(fs[0], {
      summary:
        'offset of group cg on T/broker-a/0 went backwards once (first 8 → 0: a pull from offset 0 after 8 was committed; the capture shows an offset reset (INVOKE_BROKER_TO_RESET_OFFSET) before it)',
      evidence: { flow: b.flow, code: RequestCode.PULL_MESSAGE, count: 1 },
    });
  },
);

t.test('flow-control-stall: no next pull for seconds after messages were found', async (t) => {
  const c = new Conn();
  const found = (sec: number, offset: number): void => {
    c.call(sec, RequestCode.PULL_MESSAGE, pullExt({ offset, commit: offset }), sec + 0.002, {
      ext: { nextBeginOffset: String(offset + 2), maxOffset: '100' },
      body: storedMessages(2, { topic: 'T', firstOffset: offset }),
    });
  };
  found(0, 0);
  found(0.01, 2);
  found(2.5, 4); // 2.5 s after the last answer: a stall
  c.heartbeat(4); // still alive afterwards: the last answer's pause counts too
  const fs = diagnoseConns([c]);
  t.same(checks(fs), ['flow-control-stall']);
  t.match(fs[0], {
    summary:
      /pulls of T\/broker-a\/0 \(group cg\) paused 2 times right after finding messages \(longest 2\.\d+ s, .* in all; still paused when the capture ended\)/,
    evidence: { count: 2, flow: c.flow, queue: 'T/broker-a/0' },
  });
});

t.test('rebalance-storm: membership changes of one group in bursts', async (t) => {
  const a = new Conn();
  const b = new Conn();
  for (let i = 0; i < 6; i++) {
    // Each change is told to both members.
    for (const c of [a, b])
      c.answer(
        i * 3 + 0.001 * (c === b ? 1 : 0),
        createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {
          opaque: 100 + i,
          oneway: true,
          extFields: { consumerGroup: 'cg' },
        }),
      );
  }
  const fs = diagnoseConns([a, b]);
  t.same(checks(fs), ['rebalance-storm']);
  t.match(fs[0], {
    summary: /group cg's members changed 6 times in 15\.0 s \(6 changes, 12 NOTIFY_CONSUMER_IDS_CHANGED/,
    evidence: { group: 'cg', count: 6, flow: a.flow, code: 40 },
  });
  t.same(
    diagnoseConns([a, b], { rebalanceStormWindowMs: 10000 }),
    [],
    'fewer changes in the window than the threshold',
  );
});

t.test('error-response: refusals by code; answers such as PULL_NOT_FOUND are not errors', async (t) => {
  const c = new Conn();
  const busy = c.call(0, RequestCode.SEND_MESSAGE_V2, { a: 'pg', b: 'T', e: '1' }, 0.01, {
    code: ResponseCode.SYSTEM_BUSY,
    remark: '[TIMEOUT_CLEAN_QUEUE]broker busy',
  });
  c.call(0.1, RequestCode.SEND_MESSAGE_V2, { a: 'pg', b: 'T', e: '1' }, 0.11, {
    code: ResponseCode.SYSTEM_BUSY,
    remark: '[TIMEOUT_CLEAN_QUEUE]broker busy',
  });
  c.call(0.2, RequestCode.PULL_MESSAGE, pullExt({ offset: 1 }), 0.21, {
    code: ResponseCode.SUBSCRIPTION_NOT_LATEST,
    remark: "the consumer's subscription not latest",
  });
  c.call(0.3, RequestCode.PULL_MESSAGE, pullExt({ offset: 1, queueId: 2 }), 0.31, {
    code: ResponseCode.PULL_NOT_FOUND,
    ext: { nextBeginOffset: '1', maxOffset: '1' },
  });
  c.call(0.4, RequestCode.PULL_MESSAGE, pullExt({ offset: 900, queueId: 3 }), 0.41, {
    code: ResponseCode.PULL_OFFSET_MOVED,
    ext: { nextBeginOffset: '10', maxOffset: '10' },
  });
  c.call(0.5, RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: 'cg', topic: 'T', queueId: '0' }, 0.51, {
    code: ResponseCode.QUERY_NOT_FOUND,
  });
  const ns = new Conn({ ip: '10.0.0.1', port: 9876 });
  ns.call(0.6, RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: '%RETRY%cg' }, 0.61, {
    code: ResponseCode.TOPIC_NOT_EXIST,
  });
  ns.call(0.7, RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Nope' }, 0.71, {
    code: ResponseCode.TOPIC_NOT_EXIST,
    remark: 'No topic route info in name server for the topic: Nope',
  });
  // A topic that sending creates: no route at first, then a route (auto-creation): not an error.
  ns.call(0.8, RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Auto' }, 0.81, { code: ResponseCode.TOPIC_NOT_EXIST });
  ns.call(0.9, RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Auto' }, 0.91, {
    body: Buffer.from(
      '{"brokerDatas":[{"brokerName":"broker-a","brokerAddrs":{"0":"10.0.0.1:10911"}}],"queueDatas":[]}',
    ),
  });
  const fs = diagnoseConns([c, ns]);
  t.same(
    fs.map((f) => `${f.severity} ${f.check} ${f.evidence.code} x${f.evidence.count}`),
    [
      'error error-response 17 x1',
      'warning error-response 2 x2',
      'warning error-response 25 x1',
      'warning error-response 21 x1',
    ],
  );
  t.match(fs[1], {
    summary:
      '2 SEND_MESSAGE_V2 requests answered SYSTEM_BUSY (2) (first: topic T, group pg): "[TIMEOUT_CLEAN_QUEUE]broker busy"',
    meaning: /shedding load/,
    evidence: { firstMs: ms(0.01), lastMs: ms(0.11), flow: c.flow, opaque: busy.opaque },
  });
  t.match(fs[0]!.summary, /GET_ROUTEINFO_BY_TOPIC request answered TOPIC_NOT_EXIST \(17\) \(first: topic Nope\)/);
  t.match(fs[3], { evidence: { queue: 'T/broker-a/3', group: 'cg' }, meaning: /outside the queue/ });
});

t.test(
  'error-response: a SUBSCRIPTION_NOT_LATEST the consumer heals by its next heartbeat is not reported; one that lasts is',
  async (t) => {
    // The Java client pulls with a new subVersion a moment before its heartbeat carries it when the
    // heartbeat after a rebalance loses its tryLock (seen in a clean capture of Java 5.3.3): the
    // broker refuses, Java pulls again 3 s later, and the heartbeat has arrived by then.
    const notLatest = { code: ResponseCode.SUBSCRIPTION_NOT_LATEST, remark: "the consumer's subscription not latest" };
    const found = { code: ResponseCode.PULL_NOT_FOUND, ext: { nextBeginOffset: '1', maxOffset: '1' } };
    const healed = new Conn();
    healed.call(0, RequestCode.PULL_MESSAGE, pullExt({ offset: 1 }), 0.01, notLatest);
    healed.call(0.02, RequestCode.PULL_MESSAGE, pullExt({ offset: 1, queueId: 1 }), 0.03, notLatest);
    healed.call(3.0, RequestCode.PULL_MESSAGE, pullExt({ offset: 1 }), 3.01, found);
    healed.call(3.0, RequestCode.PULL_MESSAGE, pullExt({ offset: 1, queueId: 1 }), 3.01, found);
    t.same(diagnoseConns([healed]), [], 'healed within transientRefusalHealMs on both queues');

    const lasting = new Conn();
    for (let i = 0; i < 10; i++)
      lasting.call(i * 3, RequestCode.PULL_MESSAGE, pullExt({ offset: 1 }), i * 3 + 0.01, notLatest);
    lasting.call(30, RequestCode.PULL_MESSAGE, pullExt({ offset: 1 }), 30.01, found);
    const fs = diagnoseConns([lasting]);
    t.same(
      fs.map((f) => `${f.check} ${f.evidence.code} x${f.evidence.count}`),
      ['error-response 25 x10'],
      'refused for 27 s before the pulls went through: reported, every refusal counted',
    );
    t.match(fs[0], { evidence: { firstMs: ms(0.01), lastMs: ms(27.01), queue: 'T/broker-a/0', group: 'cg' } });
    t.same(diagnoseConns([lasting], { transientRefusalHealMs: 60000 }).length, 0, 'the threshold is an option');

    const ended = new Conn();
    ended.call(0, RequestCode.PULL_MESSAGE, pullExt({ offset: 1 }), 0.01, notLatest);
    t.same(
      checks(diagnoseConns([ended])),
      ['error-response'],
      'a refusal the capture ends on is reported: it was not seen to heal',
    );
  },
);

t.test(
  'unanswered and slow-response: a heartbeat lost, a slow send; held pulls slow only past suspend + margin',
  async (t) => {
    const c = new Conn();
    const hb = c.heartbeat(0, null);
    c.call(1, RequestCode.SEND_MESSAGE_V2, { a: 'pg', b: 'T', e: '0' }, 2.5, {
      ext: { msgId: 'X', queueId: '0', queueOffset: '0' },
    });
    c.call(3, RequestCode.PULL_MESSAGE, pullExt({ offset: 1, queueId: 1 }), 18, {
      code: ResponseCode.PULL_NOT_FOUND,
      ext: { nextBeginOffset: '1', maxOffset: '1' },
    });
    c.call(19, RequestCode.PULL_MESSAGE, pullExt({ offset: 1, queueId: 1 }), 40, {
      code: ResponseCode.PULL_NOT_FOUND,
      ext: { nextBeginOffset: '1', maxOffset: '1' },
    });
    c.heartbeat(41, null); // young at the end: not reported
    const fs = diagnoseConns([c]);
    t.same(checks(fs), ['unanswered', 'slow-response', 'slow-response']);
    t.match(fs[0], {
      severity: 'error',
      summary: /a HEART_BEAT request never answered \(sent 41\.0 s before the capture ended\)/,
      evidence: { opaque: hb.opaque, flow: c.flow, code: 34, count: 1 },
    });
    t.match(fs[1], {
      summary: /1 SEND_MESSAGE_V2 response slower than 1\.00 s \(slowest 1\.50 s\)/,
      evidence: { code: RequestCode.SEND_MESSAGE_V2 },
    });
    t.match(fs[2], {
      summary: /1 PULL_MESSAGE response slower than their suspend time plus 5\.00 s \(slowest 21\.0 s\)/,
      evidence: { queue: 'T/broker-a/1', firstMs: ms(19) },
    });
  },
);

t.test(
  'duplicate-delivery: the same msgId given twice to a group; retries and other groups do not count',
  async (t) => {
    const c = new Conn();
    const other = new Conn();
    const give = (conn: Conn, sec: number, group: string, first: number, n: number): void => {
      conn.call(sec, RequestCode.PULL_MESSAGE, pullExt({ group, offset: first }), sec + 0.002, {
        ext: { nextBeginOffset: String(first + n), maxOffset: '100' },
        body: storedMessages(n, { topic: 'T', firstOffset: first }),
      });
    };
    give(c, 0, 'cg', 0, 4);
    give(other, 0.1, 'cg2', 0, 4);
    give(c, 0.2, 'cg', 2, 4); // offsets 2 and 3 again
    const fs = diagnoseConns([c, other]);
    t.same(checks(fs), ['duplicate-delivery']);
    t.match(fs[0], {
      summary:
        /2 messages delivered again to group cg \(first: msgId UNIQ00000002, T queue offset 2, again 200 ms after its first delivery\)/,
      evidence: { group: 'cg', count: 2, queue: 'T/broker-a/0' },
    });
  },
);

t.test('diagnose takes any iterable of decoded frames, and the order of findings is stable', async (t) => {
  const c = new Conn();
  c.call(0, RequestCode.SEND_MESSAGE_V2, { a: 'pg', b: 'T' }, 0.01, {
    code: ResponseCode.NO_PERMISSION,
    remark: 'the topic[T] sending message is forbidden',
  });
  c.heartbeat(0.5, null);
  c.heartbeat(5);
  const frames: Parameters<typeof diagnose>[0] extends Iterable<infer F> ? F[] : never = [];
  const dec = new CaptureDecoder({
    frame: (f) => frames.push({ ...f, cmd: { ...f.cmd, body: f.cmd.body ? Buffer.from(f.cmd.body) : null } }),
    problem: () => {},
  });
  dec.push(pcapOf([c]));
  dec.end();
  const a = diagnose(frames);
  t.same(checks(a), ['error-response', 'unanswered']);
  t.same(diagnose(frames), a);
});

t.test('options are checked, naming the option', async (t) => {
  t.throws(() => resolveDoctorOptions({ slowResponseMs: -1 }), {
    name: 'DoctorOptionError',
    option: 'slowResponseMs',
    message: /doctor option slowResponseMs: must be >= 0, got -1/,
  });
  t.throws(() => resolveDoctorOptions({ longPollLoopCount: 1.5 }), DoctorOptionError);
  t.throws(() => resolveDoctorOptions({ bogus: 1 } as never), { name: 'DoctorOptionError', option: 'bogus' } as never);
  t.equal(resolveDoctorOptions().lagStallMs, 15000);
});

t.test('CLI: decode --doctor prints findings, exit 3; --json; nothing found exit 0', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rocketwire-doctor-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sick = new Conn();
  sick.call(0, RequestCode.SEND_MESSAGE_V2, { a: 'pg', b: 'T' }, 0.01, {
    code: ResponseCode.TOPIC_NOT_EXIST,
    remark: 'topic[T] not exist',
  });
  const sickFile = join(dir, 'sick.pcap');
  writeFileSync(sickFile, pcapOf([sick]));
  const healthy = new Conn();
  healthyConsumer(healthy);
  const healthyFile = join(dir, 'healthy.pcap');
  writeFileSync(healthyFile, pcapOf([healthy]));

  const r = await runCli(['decode', '--doctor', sickFile]);
  t.equal(r.code, 3);
  t.equal(r.stderr, '');
  t.match(
    r.stdout,
    /^1 problem found in 2 frames:\n\nERROR error-response: 1 SEND_MESSAGE_V2 request answered TOPIC_NOT_EXIST \(17\)/,
  );
  t.match(
    r.stdout,
    /\n {2}at 2023-11-14T22:13:20\.\d+Z, flow 10\.0\.0\.5:\d+ -> 10\.0\.0\.1:10911, opaque 1, group pg, code TOPIC_NOT_EXIST\(17\), seen 1x\n {2}means: The topic does not exist/,
  );

  const j = await runCli(['decode', '--doctor', '--json', sickFile]);
  t.equal(j.code, 3);
  const out = JSON.parse(j.stdout);
  t.equal(out.frames, 2);
  t.match(out.findings, [{ check: 'error-response', severity: 'error', evidence: { code: 17, count: 1, opaque: 1 } }]);

  const ok = await runCli(['decode', '--doctor', healthyFile]);
  t.equal(ok.code, 0);
  t.match(ok.stdout, /^no problems found in \d+ frames\n$/);
  t.same(JSON.parse((await runCli(['decode', '--doctor', '--json', healthyFile])).stdout).findings, []);

  const bad = await runCli(['decode', '--doctor', '--stats', healthyFile]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--doctor excludes --stats and --msgpack/);
});
