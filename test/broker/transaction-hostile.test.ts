// END_TRANSACTION on the embedded broker ends only a half message of the named
// producer group, commits only to a topic a producer may write, and a second end of one half
// message writes nothing. Counts of stored records, on a ManualClock.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { newTopicConfig } from '../../lib/broker/topic-config.js';
import { ManualClock } from '../../lib/clock.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import {
  CheckTransactionStateRequestHeader,
  createRequest,
  EndTransactionRequestHeader,
  MessageSysFlag,
  PermName,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';
import { client, heartbeatRequest, sendRequest } from './helpers.js';
import { roundTrip } from '../support/embedded-broker.js';
import { until } from '../support/until.js';

const TOPIC = 'TxHostile';
const GROUP = 'tx_hostile_pg';
const COMMIT = MessageSysFlag.TRANSACTION_COMMIT_TYPE;
const ROLLBACK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE;
const OP_TOPIC = 'RMQ_SYS_TRANS_OP_HALF_TOPIC';

interface Sent {
  uniqKey: string;
  queueOffset: number;
  commitLogOffset: number;
  res: RemotingCommand;
}

async function send(
  c: RemotingClient,
  b: EmbeddedBroker,
  clock: ManualClock,
  topic: string,
  body: string,
  properties: Record<string, string>,
  sysFlag = 0,
): Promise<Sent> {
  const req = sendRequest(topic, body, { properties, sysFlag });
  req.extFields!.g = String(clock.now());
  const res = await c.invoke(b.broker, req);
  const uniqKey = /UNIQ_KEY\u0001([0-9A-F]+)/.exec(req.extFields!.i!)![1]!;
  const commitLogOffset = res.extFields?.msgId ? Number(BigInt('0x' + res.extFields.msgId.slice(-16))) : -1;
  return { res, uniqKey, queueOffset: Number(res.extFields?.queueOffset), commitLogOffset };
}

function sendHalf(
  c: RemotingClient,
  b: EmbeddedBroker,
  clock: ManualClock,
  body: string,
  topic = TOPIC,
): Promise<Sent> {
  return send(c, b, clock, topic, body, { TRAN_MSG: 'true', PGROUP: GROUP }, MessageSysFlag.TRANSACTION_PREPARED_TYPE);
}

function end(
  c: RemotingClient,
  b: EmbeddedBroker,
  h: Sent,
  commitOrRollback: number,
  topic = TOPIC,
  fromTransactionCheck = false,
): Promise<RemotingCommand> {
  const fields: EndTransactionRequestHeader = {
    producerGroup: GROUP,
    tranStateTableOffset: h.queueOffset,
    commitLogOffset: h.commitLogOffset,
    commitOrRollback,
    fromTransactionCheck,
    msgId: h.uniqKey,
    transactionId: h.uniqKey,
    topic,
  };
  return c.invoke(
    b.broker,
    createRequest(RequestCode.END_TRANSACTION, { extFields: EndTransactionRequestHeader.encode(fields) }),
  );
}

async function setup(t: Test, opts: Parameters<typeof startBroker>[0] = {}) {
  const clock = new ManualClock();
  const broker = await startBroker({ queues: 1, clock, ...opts });
  const c = client();
  t.teardown(async () => {
    await c.close();
    await broker.close();
  });
  return { clock, broker, c, b: broker.instances[0]! };
}

t.test(
  'M1: END_TRANSACTION(commit) of a normal message carrying PGROUP, REAL_TOPIC and REAL_QID is refused and writes nothing',
  async (t) => {
    const { clock, broker, c, b } = await setup(t);
    b.topics.put(newTopicConfig('TxReadOnly', 1, PermName.PERM_READ));
    b.topics.ensure('%DLQ%victim_cg', 1);
    // the op topic and the half topic exist once one real transaction ran
    const real = await sendHalf(c, broker, clock, 'real');
    t.equal((await end(c, broker, real, ROLLBACK)).code, ResponseCode.SUCCESS);
    const store = b.messageStore;
    const before = {
      ro: store.getMaxOffset('TxReadOnly', 0),
      op: store.getMaxOffset(OP_TOPIC, 0),
      dlq: store.getMaxOffset('%DLQ%victim_cg', 0),
      topic: store.getMaxOffset(TOPIC, 0),
    };
    t.same(before, { ro: 0, op: 1, dlq: 0, topic: 0 });

    for (const target of ['TxReadOnly', OP_TOPIC, '%DLQ%victim_cg', TOPIC]) {
      const forged = await send(c, broker, clock, TOPIC, `forged→${target}`, {
        PGROUP: GROUP,
        REAL_TOPIC: target,
        REAL_QID: '0',
      });
      t.equal(forged.res.code, ResponseCode.SUCCESS, 'a normal message is stored');
      const res = await end(c, broker, forged, COMMIT);
      t.equal(res.code, ResponseCode.SYSTEM_ERROR, `REAL_TOPIC ${target}: refused with Java's bad-request code`);
      t.match(res.remark, /is not a half message: its topic is not RMQ_SYS_TRANS_HALF_TOPIC/, 'the remark names why');
      t.equal((await end(c, broker, forged, ROLLBACK)).code, ResponseCode.SYSTEM_ERROR, 'a rollback of it too');
    }
    t.same(
      {
        ro: store.getMaxOffset('TxReadOnly', 0),
        op: store.getMaxOffset(OP_TOPIC, 0),
        dlq: store.getMaxOffset('%DLQ%victim_cg', 0),
        topic: store.getMaxOffset(TOPIC, 0),
      },
      { ro: 0, op: 1, dlq: 0, topic: 4 },
      'nothing written to the read-only topic, the op topic or the DLQ (the topic holds only the 4 forged sends)',
    );
    t.equal(b.tx.end.counters.committed, 0);
  },
);

t.test('M1: a real half message commits only to a topic a producer may write', async (t) => {
  const { clock, broker, c, b } = await setup(t);
  const store = b.messageStore;
  // a half sent to a DLQ topic (the send path creates %DLQ% topics on the fly)
  const toDlq = await sendHalf(c, broker, clock, 'dlq', '%DLQ%victim_cg');
  t.equal(toDlq.res.code, ResponseCode.SUCCESS);
  const r1 = await end(c, broker, toDlq, COMMIT, '%DLQ%victim_cg');
  t.equal(r1.code, ResponseCode.SYSTEM_ERROR);
  t.equal(
    r1.remark,
    'REAL_TOPIC %DLQ%victim_cg is a system, retry or dead-letter topic: a transaction cannot commit to it',
  );
  t.equal(store.getMaxOffset('%DLQ%victim_cg', 0), 0, 'nothing in the DLQ');

  // a half whose topic was made read-only before the commit
  const h = await sendHalf(c, broker, clock, 'late');
  t.equal(h.res.code, ResponseCode.SUCCESS);
  b.topics.put(newTopicConfig(TOPIC, 1, PermName.PERM_READ));
  const r2 = await end(c, broker, h, COMMIT);
  t.equal(r2.code, ResponseCode.SYSTEM_ERROR);
  t.equal(r2.remark, `REAL_TOPIC ${TOPIC} is not writable (perm ${PermName.PERM_READ})`);
  t.equal(store.getMaxOffset(TOPIC, 0), 0, 'nothing committed to the read-only topic');
  t.equal(store.getMaxOffset(OP_TOPIC, 0), 0, 'no op record: the half stays open for the check');
  b.topics.put(newTopicConfig(TOPIC, 1));
  t.equal((await end(c, broker, h, COMMIT)).code, ResponseCode.SUCCESS, 'writable again: it commits');
  t.equal(store.getMaxOffset(TOPIC, 0), 1);
});

t.test('M2: three commits of one half message deliver one message; rollback then commit delivers none', async (t) => {
  const { clock, broker, c, b } = await setup(t);
  const store = b.messageStore;
  const h = await sendHalf(c, broker, clock, 'once');
  for (let i = 0; i < 3; i++)
    t.equal((await end(c, broker, h, COMMIT)).code, ResponseCode.SUCCESS, `commit ${i + 1} answered SUCCESS`);
  t.equal(store.getMaxOffset(TOPIC, 0), 1, 'one message on the topic');
  t.equal(store.getMaxOffset(OP_TOPIC, 0), 1, 'one op record');
  const back = await end(c, broker, h, ROLLBACK);
  t.equal(back.code, ResponseCode.SYSTEM_ERROR, 'a rollback after the commit is refused');
  t.equal(
    back.remark,
    `the half message at queue offset ${h.queueOffset} was already committed: commitOrRollback ignored`,
  );

  const r = await sendHalf(c, broker, clock, 'never');
  t.equal((await end(c, broker, r, ROLLBACK)).code, ResponseCode.SUCCESS);
  const commit = await end(c, broker, r, COMMIT);
  t.equal(commit.code, ResponseCode.SYSTEM_ERROR);
  t.equal(
    commit.remark,
    `the half message at queue offset ${r.queueOffset} was already rolled back: commitOrRollback ignored`,
  );
  t.equal((await end(c, broker, r, ROLLBACK)).code, ResponseCode.SUCCESS, 'a second rollback is answered SUCCESS');
  t.equal(store.getMaxOffset(TOPIC, 0), 1, 'still one message on the topic: the rolled-back one never came');
  t.equal(store.getMaxOffset(OP_TOPIC, 0), 2, 'one op record per half message');
  // refused counts only the two refusals, never an end answered SUCCESS
  t.match(b.tx.end.counters, { committed: 1, rolledBack: 1, repeated: 5, refused: 2 });
});

t.test('M2: ended halves are read back from the op queue at start, bounded by maxEndedHalves', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-tx-ended-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const a = await setup(t, { dataDir, maxEndedHalves: 3 });
  const halves: Sent[] = [];
  for (let i = 0; i < 5; i++) halves.push(await sendHalf(a.c, a.broker, a.clock, `h${i}`));
  for (const h of halves) t.equal((await end(a.c, a.broker, h, COMMIT)).code, ResponseCode.SUCCESS);
  t.equal(a.b.tx.service.endedHalves.size, 3, 'at most maxEndedHalves remembered');
  await a.c.close();
  await a.broker.close();

  const b = await setup(t, { dataDir, maxEndedHalves: 3 });
  t.equal(b.b.tx.service.endedHalves.size, 3, 'the last 3 op records read back at start');
  const store = b.b.messageStore;
  t.equal(store.getMaxOffset(TOPIC, 0), 5);
  for (const h of halves.slice(2)) t.equal((await end(b.c, b.broker, h, COMMIT)).code, ResponseCode.SUCCESS);
  t.equal(store.getMaxOffset(TOPIC, 0), 5, 'a repeat of any of the last 3 ends after the restart writes nothing');
  await t.rejects(startBroker({ maxEndedHalves: 0 }), { name: 'BrokerOptionError', option: 'maxEndedHalves' });
});

t.test(
  "M2: the half and the check's copy of it are one transaction: the producer's late commit and its answer to the check deliver one message",
  async (t) => {
    const { clock, broker, c, b } = await setup(t, { transactionCheckInterval: 1000, transactionTimeOut: 1000 });
    const store = b.messageStore;
    const checks: RemotingCommand[] = [];
    c.registerProcessor(RequestCode.CHECK_TRANSACTION_STATE, (req) => {
      checks.push(req);
      return null;
    });
    await c.invoke(broker.broker, heartbeatRequest('raw@tx', '', [], GROUP));
    const h = await sendHalf(c, broker, clock, 'slow');
    clock.advance(1000);
    clock.advance(1000);
    await until(() => checks.length === 1, 'the check of the half', 3000);
    const hdr = CheckTransactionStateRequestHeader.decode(checks[0]!.extFields);
    t.not(hdr.commitLogOffset, h.commitLogOffset, 'the check names the re-put copy');
    t.equal(
      (await end(c, broker, h, COMMIT)).code,
      ResponseCode.SUCCESS,
      "the producer's own (late) commit of the half",
    );
    const copy = { ...h, queueOffset: hdr.tranStateTableOffset, commitLogOffset: hdr.commitLogOffset };
    t.equal(
      (await end(c, broker, copy, COMMIT, 'RMQ_SYS_TRANS_HALF_TOPIC', true)).code,
      ResponseCode.SUCCESS,
      'its answer to the check: SUCCESS',
    );
    t.equal(store.getMaxOffset(TOPIC, 0), 1, 'one message delivered');
    t.equal(
      store.getMaxOffset(OP_TOPIC, 0),
      2,
      'an op record for the half and for the copy, so the check loop stops asking',
    );
    const asked = checks.length;
    clock.advance(1000);
    clock.advance(1000);
    await roundTrip(c, broker.broker); // a check these rounds sent would have come before this answer
    t.equal(checks.length, asked, 'not asked again');
    const back = await end(c, broker, copy, ROLLBACK, 'RMQ_SYS_TRANS_HALF_TOPIC', true);
    t.equal(back.code, ResponseCode.SYSTEM_ERROR, 'a rollback of the copy after the commit is refused');
  },
);
