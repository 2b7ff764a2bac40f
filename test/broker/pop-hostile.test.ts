// The embedded broker refuses a POP with invisibleTime −1 (every message visible
// again at once), a CHANGE_INVISIBLETIME to a negative time, and an ACK or CHANGE_INVISIBLETIME
// whose extraInfo is not an 8-field receipt handle (Apache reads the first fields of any string:
// 100 000 fields pass). Counts of open checkpoints, on a ManualClock.
import t, { type Test } from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import { RequestCode, ResponseCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { encodeReceiptHandle } from '../../protocol/pop-extra-info.js';
import { client, decode } from './helpers.js';
import { produce, uniqueName } from '../consumer/helpers.js';

async function setup(
  t: Test,
): Promise<{ b: EmbeddedBroker; clock: ManualClock; raw: RemotingClient; topic: string; group: string }> {
  const clock = new ManualClock();
  const b = await startBroker({ queues: 1, clock });
  const raw = client();
  t.teardown(async () => {
    await raw.close();
    await b.close();
  });
  return { b, clock, raw, topic: uniqueName('PopHostileT'), group: uniqueName('PopHostileG') };
}

function pop(
  raw: RemotingClient,
  b: EmbeddedBroker,
  topic: string,
  group: string,
  invisibleTime: string,
): Promise<RemotingCommand> {
  return raw.invoke(
    b.broker,
    createRequest(RequestCode.POP_MESSAGE, {
      extFields: {
        consumerGroup: group,
        topic,
        queueId: '-1',
        maxMsgNums: '32',
        invisibleTime,
        pollTime: '0',
        bornTime: '0',
        initMode: '0',
      },
    }),
  );
}

t.test('L1: POP with invisibleTime −1 (or past the maximum) is refused and hands nothing out', async (t) => {
  const { b, raw, topic, group } = await setup(t);
  await produce(b.namesrv, topic, 1, undefined, { single: true });
  const pops = b.instances[0]!.pop;
  for (const bad of ['-1', '0', '999', String(12 * 3600_000 + 1)]) {
    const res = await pop(raw, b, topic, group, bad);
    t.equal(res.code, ResponseCode.INVALID_PARAMETER, `invisibleTime ${bad}`);
    t.equal(
      res.remark,
      `invisibleTime ${bad} is outside [1000, 43200000] ms (the broker options minPopInvisibleTimeMs and maxPopInvisibleTimeMs)`,
    );
  }
  t.equal(pops.checkpoints.size, 0, 'no checkpoint opened');
  const good = await pop(raw, b, topic, group, '1000');
  t.equal(good.code, ResponseCode.SUCCESS, 'the smallest invisibleTime allowed pops');
  t.equal(decode(good).length, 1, 'the message was still there to pop');
  await t.rejects(startBroker({ minPopInvisibleTimeMs: 0 }), {
    name: 'BrokerOptionError',
    option: 'minPopInvisibleTimeMs',
  });
  await t.rejects(startBroker({ minPopInvisibleTimeMs: 5000, maxPopInvisibleTimeMs: 4000 }), {
    name: 'BrokerOptionError',
    option: 'maxPopInvisibleTimeMs',
  });
});

t.test(
  'L1: ACK and CHANGE_INVISIBLETIME refuse an extraInfo that is not an 8-field receipt handle, and CHANGE a negative time',
  async (t) => {
    const { b, raw, topic, group } = await setup(t);
    await produce(b.namesrv, topic, 1, undefined, { single: true });
    const pops = b.instances[0]!.pop;
    const res = await pop(raw, b, topic, group, '60000');
    const [m] = decode(res);
    t.ok(m, 'popped');
    const start = Number(/^0 0 (\d+)$/.exec(res.extFields!.startOffsetInfo!)![1]);
    const handle = encodeReceiptHandle({
      ckQueueOffset: start,
      popTime: Number(res.extFields!.popTime),
      invisibleTime: 60000,
      reviveQid: Number(res.extFields!.reviveQid),
      retry: '0',
      brokerName: 'broker-a',
      queueId: m!.queueId,
      queueOffset: m!.queueOffset,
    });
    t.equal(pops.checkpoints.size, 1, 'one checkpoint open');
    const ack = (extraInfo: string) =>
      raw.invoke(
        b.broker,
        createRequest(RequestCode.ACK_MESSAGE, {
          extFields: {
            consumerGroup: group,
            topic,
            queueId: String(m!.queueId),
            extraInfo,
            offset: String(m!.queueOffset),
          },
        }),
      );
    const change = (extraInfo: string, invisibleTime: string) =>
      raw.invoke(
        b.broker,
        createRequest(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, {
          extFields: {
            consumerGroup: group,
            topic,
            queueId: String(m!.queueId),
            extraInfo,
            offset: String(m!.queueOffset),
            invisibleTime,
          },
        }),
      );

    // the receipt handle followed by fields up to 100 000 (about 200 KB): Apache acks with it
    const huge = handle + ' 0'.repeat(100_000 - 8);
    const a1 = await ack(huge);
    t.equal(a1.code, ResponseCode.INVALID_PARAMETER, '100 000 fields: refused');
    t.equal(a1.remark, `extraInfo is ${huge.length} characters, more than 1024: not a receipt handle`);
    const nine = await ack(`${handle} 0`);
    t.equal(nine.code, ResponseCode.INVALID_PARAMETER, '9 fields: refused');
    t.match(nine.remark, /^extraInfo has 9 fields, not 8 /);
    t.equal((await change(huge, '1000')).code, ResponseCode.INVALID_PARAMETER, 'CHANGE with 100 000 fields: refused');
    const neg = await change(handle, '-1');
    t.equal(neg.code, ResponseCode.INVALID_PARAMETER, 'CHANGE to −1: refused');
    t.equal(neg.remark, 'invisibleTime -1 is outside [0, 43200000] ms (the broker option maxPopInvisibleTimeMs)');
    t.equal(pops.checkpoints.size, 1, 'the checkpoint is untouched by all of those');

    const moved = await change(handle, '0');
    t.equal(
      moved.code,
      ResponseCode.SUCCESS,
      'CHANGE to 0 (visible again now) is what a Java popDelayLevel of 0 sends: allowed',
    );
    t.equal(pops.checkpoints.size, 1, 'one checkpoint: the new one');
    const rehandle = encodeReceiptHandle({
      ckQueueOffset: m!.queueOffset,
      popTime: Number(moved.extFields!.popTime),
      invisibleTime: 0,
      reviveQid: Number(moved.extFields!.reviveQid),
      retry: '0',
      brokerName: 'broker-a',
      queueId: m!.queueId,
      queueOffset: m!.queueOffset,
    });
    t.equal((await ack(rehandle)).code, ResponseCode.SUCCESS, 'a well-formed ACK is accepted');
    t.equal(pops.checkpoints.size, 0, 'and acks');
  },
);
