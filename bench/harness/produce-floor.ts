// The floor of `rocketwire bench --produce-vs floor`: a bare RemotingClient sending the frames a
// producer sends (SEND_MESSAGE_V2, or SEND_BATCH_MESSAGE for batches) to the topic's write queues in
// turn, with the same bodies and the same concurrency, and nothing else: no validation, no message
// id per message, no queue selection beyond a counter, no fault handling, no result parsing. What a
// producer costs above it is what rocketwire could still remove; what the floor costs is the broker's.
import {
  createRequest,
  encodeBatch,
  RequestCode,
  ResponseCode,
  SendMessageRequestHeaderV2,
} from '../../protocol/index.js';
import { AdminClient } from '../../lib/admin/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { benchBody, benchTemplate, type DriveMode } from './produce-driver.cjs';
import { measureSends, type MeasuredRun } from './produce-run.js';

/** The same properties as a producer's message with tags (one fixed UNIQ_KEY: the broker does not check it). */
const PROPERTIES = 'UNIQ_KEY\u00017F000001000000000000000000000000\u0002WAIT\u0001true\u0002TAGS\u0001bench';

interface Target {
  addr: string;
  /** The pre-encoded header of a single send to this queue, and of a batch. */
  single: Record<string, string>;
  batch: Record<string, string>;
}

async function targets(namesrv: string, topic: string, group: string): Promise<Target[]> {
  const admin = new AdminClient({ namesrvAddr: namesrv });
  try {
    const route = await admin.topicRoute(topic);
    const out: Target[] = [];
    for (const q of route.queueDatas) {
      const addr = route.brokerDatas.find((b) => b.brokerName === q.brokerName)?.brokerAddrs['0'];
      if (!addr) continue;
      for (let queueId = 0; queueId < q.writeQueueNums; queueId++) {
        const fields = {
          producerGroup: group,
          topic,
          defaultTopic: 'TBW102',
          defaultTopicQueueNums: 4,
          queueId,
          sysFlag: 0,
          bornTimestamp: Date.now(),
          flag: 0,
          properties: PROPERTIES,
          reconsumeTimes: 0,
          unitMode: false,
          batch: false,
          bname: q.brokerName,
        };
        out.push({
          addr,
          single: SendMessageRequestHeaderV2.encode(fields),
          batch: SendMessageRequestHeaderV2.encode({ ...fields, batch: true, properties: 'WAIT\u0001true' }),
        });
      }
    }
    if (out.length === 0) throw new Error(`topic ${topic} has no writable queue on a master`);
    return out;
  } finally {
    await admin.close();
  }
}

/** The floor's run: a fresh client, the warm-up, then the measured sends (as produceRocketwire). */
export async function produceFloor(
  namesrv: string,
  mode: DriveMode & { name: string },
  topic: string,
  o: { messages: number; warmup: number; size: number },
  t0: number,
): Promise<MeasuredRun> {
  const client = new RemotingClient();
  const template = benchTemplate(o.size);
  const to = await targets(namesrv, topic, 'floor_produce_bench');
  let turn = 0;
  const check = (res: { code: number; remark?: string | null }): void => {
    if (res.code !== ResponseCode.SUCCESS) throw new Error(`send refused: ${res.code} ${res.remark ?? ''}`);
  };
  const send =
    mode.kind === 'batch'
      ? async (i: number, n: number) => {
          const t = to[turn++ % to.length]!;
          const body = encodeBatch(
            Array.from({ length: n }, (_, k) => ({ body: benchBody(i + k, template), properties: PROPERTIES })),
          );
          check(
            await client.invoke(t.addr, createRequest(RequestCode.SEND_BATCH_MESSAGE, { extFields: t.batch, body })),
          );
        }
      : async (i: number) => {
          const t = to[turn++ % to.length]!;
          const body = benchBody(i, template);
          check(await client.invoke(t.addr, createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: t.single, body })));
        };
  try {
    return await measureSends(o, mode, send, `produce (floor ${mode.name})`, t0);
  } finally {
    await client.close();
  }
}
