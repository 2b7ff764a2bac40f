/**
 * The embedded broker as tests use it: start one (four queues unless told), fill a topic, read a
 * group's progress the way the broker sees it, create a topic on several brokers, and the events a
 * test awaits instead of sleeping (a consumer drained, a round trip on a connection).
 */
import net from 'node:net';
import { startBroker, type EmbeddedBroker, type StartBrokerOptions } from '../../lib/broker/index.js';
import type { ConsumerStats } from '../../lib/consumer/index.js';
import { Producer, type Message } from '../../lib/producer/index.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, RequestCode, SCHEDULE_TOPIC } from '../../protocol/index.js';
import { uniqueName } from './names.js';

export async function withBroker(opts: StartBrokerOptions = {}): Promise<EmbeddedBroker> {
  return startBroker({ queues: 4, ...opts });
}

/** Sends `n` messages (batches of up to 64 per queue round) and returns once all are stored. */
export async function produce(
  namesrv: string,
  topic: string,
  n: number,
  make: (i: number) => Partial<Message> = () => ({}),
  opts: { single?: boolean } = {},
): Promise<void> {
  const producer = new Producer({ namesrvAddr: namesrv, group: uniqueName('pg') });
  await producer.start();
  try {
    let i = 0;
    while (i < n) {
      const batch: Message[] = [];
      for (let k = 0; k < 64 && i < n; k++, i++) {
        batch.push({ topic, body: `message-${i}`, ...make(i) });
      }
      if (opts.single || batch.some((m) => m.delayTimeLevel) || batch.length === 1) {
        for (const m of batch) await producer.send(m);
      } else {
        await producer.sendBatch(batch);
      }
    }
  } finally {
    await producer.shutdown();
  }
}

/** 18 delay levels of 100 ms, so retries come back at once in tests. */
export const FAST_DELAY_LEVELS = Array.from({ length: 18 }, () => '100ms').join(' ');

export interface QueueOffsets {
  brokerName: string;
  queueId: number;
  committed: number;
  max: number;
}

/** The broker's view of a group's progress on every queue of a topic (QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET). */
export async function brokerOffsets(namesrv: string, topic: string, group: string): Promise<QueueOffsets[]> {
  const { MQClientInstance, topicRouteToSubscribeQueues } = await import('../../lib/client/index.js');
  const inst = MQClientInstance.acquire({ namesrvAddr: namesrv, instanceName: uniqueName('probe') });
  try {
    const route = await inst.getTopicRoute(topic, { refresh: true });
    const out: QueueOffsets[] = [];
    for (const mq of topicRouteToSubscribeQueues(topic, route)) {
      const addr = inst.findBrokerAddress(mq.brokerName)!;
      out.push({
        brokerName: mq.brokerName,
        queueId: mq.queueId,
        committed: await inst.queryConsumerOffset(addr, group, mq),
        max: await inst.getMaxOffset(addr, mq),
      });
    }
    return out;
  } finally {
    await inst.release();
  }
}

export function totalLag(rows: QueueOffsets[]): number {
  return rows.reduce((a, r) => a + (r.max - Math.max(0, r.committed)), 0);
}

/**
 * Whether a push consumer has nothing more to deliver on `topics`: it holds every queue of them,
 * has pulled each to the broker's end and has no message left in its cache (none in a handler).
 * From then on a check that nothing more comes (no duplicate, no redelivery) is settled: only a
 * new message or a send-back could bring one.
 */
export async function drained(
  consumer: { stats(): ConsumerStats },
  namesrv: string,
  group: string,
  topics: string[],
): Promise<boolean> {
  const held = consumer.stats().queues;
  for (const topic of topics) {
    for (const q of await brokerOffsets(namesrv, topic, group)) {
      const s = held.find((h) => h.topic === topic && h.brokerName === q.brokerName && h.queueId === q.queueId);
      if (!s || s.dropped || s.cachedCount > 0 || s.pulledOffset < q.max) return false;
    }
  }
  return true;
}

/**
 * Whether every message waiting out a delay in the broker's schedule (SCHEDULE_TOPIC_XXXX, where
 * send-backs go) has been put on its %RETRY% topic: with `drained` on those topics, no redelivery
 * is on its way. For a broker whose scheduled messages are all send-backs.
 */
export function scheduleDelivered(broker: EmbeddedBroker): boolean {
  let scheduled = 0;
  let retried = 0;
  for (const b of broker.instances) {
    for (const tc of b.topics.all()) {
      const retry = tc.topicName.startsWith('%RETRY%');
      if (tc.topicName !== SCHEDULE_TOPIC && !retry) continue;
      let n = 0;
      for (let q = 0; q < Math.max(tc.readQueueNums, tc.writeQueueNums); q++)
        n += b.messageStore.getMaxOffset(tc.topicName, q);
      if (retry) retried += n;
      else scheduled += n;
    }
  }
  return scheduled === retried;
}

/**
 * One request and its answer on `client`'s connection to `addr`: whatever the broker wrote to that
 * connection before (a oneway check, a notification) has been read and dispatched once this resolves.
 */
export async function roundTrip(client: RemotingClient, addr: string): Promise<void> {
  await client.invoke(addr, createRequest(RequestCode.GET_BROKER_RUNTIME_INFO), { timeoutMs: 3000 });
}

/** UPDATE_AND_CREATE_TOPIC on every broker (what mqadmin updateTopic does), so a topic spans all brokers. */
export async function createTopic(brokerAddrs: string[], topic: string, queues: number): Promise<void> {
  const { RemotingClient } = await import('../../lib/remoting/index.js');
  const { createRequest, RequestCode } = await import('../../protocol/index.js');
  const client = new RemotingClient();
  try {
    for (const addr of brokerAddrs) {
      const res = await client.invoke(
        addr,
        createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
          extFields: {
            topic,
            defaultTopic: 'TBW102',
            readQueueNums: String(queues),
            writeQueueNums: String(queues),
            perm: '6',
            topicFilterType: 'SINGLE_TAG',
            topicSysFlag: '0',
            order: 'false',
          },
        }),
        { timeoutMs: 3000 },
      );
      if (res.code !== 0) throw new Error(`UPDATE_AND_CREATE_TOPIC at ${addr}: ${res.code} ${res.remark}`);
    }
  } finally {
    await client.close();
  }
}

/** A loopback port that was free a moment ago (for a server a test starts later on a known port). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** SET_MESSAGE_REQUEST_MODE POP on one broker (what mqadmin setConsumeMode does): the group pops `topic`'s queues. */
export async function setPopMode(addr: string, topic: string, group: string): Promise<void> {
  const { RemotingClient } = await import('../../lib/remoting/index.js');
  const { createRequest, RequestCode, ResponseCode } = await import('../../protocol/index.js');
  const { SetMessageRequestModeRequestBody } = await import('../../protocol/body/pop-bodies.js');
  const c = new RemotingClient();
  try {
    const body = SetMessageRequestModeRequestBody.encode({
      topic,
      consumerGroup: group,
      mode: 'POP',
      popShareQueueNum: 0,
    });
    const res = await c.invoke(addr, createRequest(RequestCode.SET_MESSAGE_REQUEST_MODE, { body }));
    if (res.code !== ResponseCode.SUCCESS) throw new Error(`SET_MESSAGE_REQUEST_MODE: ${res.code}`);
  } finally {
    await c.close();
  }
}
