/**
 * Topics and waiting on a real cluster: creating a topic, a topic's route on the name server, a broker's registration, a
 * slave's copy of a topic or of its master's messages. Each polls with a raw request (the servers
 * push nothing a test could await) at a pace a JVM takes in its stride, until a deadline.
 */
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { delay } from './jvm.js';
import { parseRouteBody, rawInvoke, type TopicRoute } from './raw-remoting.js';
import { brokerAt, CLUSTER_NAME, direct, running, type BrokerSlot, type ClusterContext } from './real-cluster-model.js';

/**
 * Poll GET_ROUTEINFO_BY_TOPIC until the route lists the `brokers` broker names (default: all
 * running); with `exact`, until it lists those and no other.
 */
export async function waitForRoute(
  ctx: ClusterContext,
  topic: string,
  o: { brokers?: string[]; exact?: boolean; timeoutMs?: number } = {},
): Promise<TopicRoute> {
  const want = o.brokers ?? ctx.brokers.filter((b) => b.jvm && b.jvm.child.exitCode === null).map((b) => b.name);
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  let last = '';
  for (;;) {
    try {
      const res = await rawInvoke(
        ctx.namesrv,
        createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic } }),
        { timeoutMs: 3000 },
      );
      if (res.code === ResponseCode.SUCCESS) {
        const route = parseRouteBody(res.body);
        const names = new Set(route.brokerDatas.map((d) => d.brokerName));
        const queued = new Set(route.queueDatas.map((q) => q.brokerName));
        const extra = o.exact ? [...names].filter((n) => !want.includes(n)) : [];
        if (want.every((n) => names.has(n) && queued.has(n)) && extra.length === 0) return route;
        last = `route lists ${[...names].join(',') || 'no broker'}`;
      } else {
        last = `code ${res.code} ${res.remark ?? ''}`;
      }
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`route of ${topic} never listed ${want.join(',')}: ${last}`);
    await delay(200);
  }
}

/** Whether the cluster's route lists `b` (its brokerName with its brokerId's address). */
export async function listed(ctx: ClusterContext, b: BrokerSlot, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const route = await waitForRoute(ctx, CLUSTER_NAME, {
        brokers: [b.name],
        timeoutMs: Math.max(0, deadline - Date.now()),
      });
      const addrs = route.brokerDatas.find((d) => d.brokerName === b.name)?.brokerAddrs ?? {};
      // controller mode: the controller assigns the ids (the master registers as 0), so any id will do
      if (ctx.controllerAddr) {
        if (Object.values(addrs).includes(`127.0.0.1:${b.port}`)) return;
      } else if (addrs[String(b.id)] === `127.0.0.1:${b.port}`) return;
      last = `${b.name} lists ${JSON.stringify(addrs)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${b.name} (brokerId ${b.id}) never registered: ${last}`);
    await delay(200);
  }
}

/** Poll GET_ALL_TOPIC_CONFIG on `b` until it knows `topic` (a 4.9 slave copies its master's every 10 s). */
export async function waitForTopicOn(ctx: ClusterContext, b: BrokerSlot, topic: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await rawInvoke(direct(ctx, b), createRequest(RequestCode.GET_ALL_TOPIC_CONFIG), {
      acl: ctx.options.acl ?? null,
      timeoutMs: 5000,
    }).catch(() => null);
    if (res?.code === ResponseCode.SUCCESS && (res.body?.toString('utf8') ?? '').includes(JSON.stringify(topic)))
      return;
    if (Date.now() > deadline)
      throw new Error(`${b.name} (brokerId ${b.id}) never copied topic ${topic} from its master`);
    await delay(250);
  }
}

/**
 * Poll GET_MAX_OFFSET on broker i's master and slave until the slave holds every message of
 * `topic`'s queues (HA replication caught up); resolves with the per-queue max offsets.
 */
export async function waitForReplica(
  ctx: ClusterContext,
  i: number,
  topic: string,
  o: { queues?: number; timeoutMs?: number } = {},
): Promise<number[]> {
  const master = brokerAt(ctx.brokers, i);
  const slave = brokerAt(ctx.slaves, i);
  const queues = o.queues ?? 4;
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  const maxOffsets = async (b: BrokerSlot): Promise<number[]> => {
    const out: number[] = [];
    for (let q = 0; q < queues; q++) {
      const res = await rawInvoke(
        direct(ctx, b),
        createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic, queueId: String(q) } }),
        {
          acl: ctx.options.acl ?? null,
        },
      );
      out.push(res.code === ResponseCode.SUCCESS ? Number(res.extFields?.offset ?? -1) : -1);
    }
    return out;
  };
  let last = '';
  for (;;) {
    try {
      const [m, s] = [await maxOffsets(master), await maxOffsets(slave)];
      if (m.every((x, q) => x >= 0 && x === s[q])) return m;
      last = `master ${m.join(',')}, slave ${s.join(',')}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${master.name}'s slave never caught up on ${topic}: ${last}`);
    await delay(100);
  }
}

/**
 * Poll the name server until the route of `topic` lists exactly `ids` (0 = master, 1 = slave)
 * for broker group i (an empty `ids`: the group is gone from the route).
 */
export async function waitForBrokerIds(
  ctx: ClusterContext,
  topic: string,
  i: number,
  ids: number[],
  o: { timeoutMs?: number } = {},
): Promise<TopicRoute> {
  const name = brokerAt(ctx.brokers, i).name;
  const want = [...ids].sort().join(',');
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  let last = '';
  for (;;) {
    try {
      const res = await rawInvoke(
        ctx.namesrv,
        createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic } }),
        { timeoutMs: 3000 },
      );
      if (res.code === ResponseCode.SUCCESS) {
        const route = parseRouteBody(res.body);
        const addrs = route.brokerDatas.find((d) => d.brokerName === name)?.brokerAddrs ?? {};
        const have = Object.keys(addrs).sort().join(',');
        if (have === want) return route;
        last = `${name} has brokerIds [${have}]`;
      } else {
        last = `code ${res.code} ${res.remark ?? ''}`;
      }
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(`route of ${topic} never listed brokerIds [${want}] for ${name}: ${last}`);
    await delay(100);
  }
}

/**
 * UPDATE_AND_CREATE_TOPIC on each broker (all by default) and its slave, then wait until the route
 * lists them.
 */
export async function createTopic(
  ctx: ClusterContext,
  topic: string,
  o: { queues?: number; brokers?: number[]; perm?: number; attributes?: Record<string, string> } = {},
): Promise<TopicRoute> {
  const { brokers, slaves } = ctx;
  const queues = o.queues ?? 4;
  const which = o.brokers ?? brokers.map((_, i) => i);
  // Slaves too: a slave copies its master's topics only every 10 s (SlaveSynchronize), and
  // answers a pull for a topic it does not know with TOPIC_NOT_EXIST.
  const targets = which.flatMap((i) => [
    brokerAt(brokers, i),
    ...(slaves[i] && running(slaves[i]!) ? [slaves[i]!] : []),
  ]);
  for (const b of targets) {
    const req = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      extFields: {
        topic,
        defaultTopic: 'TBW102',
        readQueueNums: String(queues),
        writeQueueNums: String(queues),
        perm: String(o.perm ?? 6),
        topicFilterType: 'SINGLE_TAG',
        topicSysFlag: '0',
        order: 'false',
        // 5.x topic attributes, as AttributeParser reads them: "+key=value,+key2=value2".
        ...(o.attributes
          ? {
              attributes: Object.entries(o.attributes)
                .map(([k, v]) => `+${k}=${v}`)
                .join(','),
            }
          : {}),
      },
    });
    const res = await rawInvoke(direct(ctx, b), req, { acl: ctx.options.acl ?? null, timeoutMs: 10_000 });
    // 4.9 slaves refuse ("Can't modify topic or subscription group from slave broker"): wait for their copy.
    if (b.master && res.code !== ResponseCode.SUCCESS && /slave/i.test(res.remark ?? '')) {
      await waitForTopicOn(ctx, b, topic);
      continue;
    }
    if (res.code !== ResponseCode.SUCCESS)
      throw new Error(`create topic ${topic} on ${b.name}: code ${res.code} ${res.remark ?? ''}`);
  }
  return waitForRoute(ctx, topic, { brokers: which.map((i) => brokerAt(brokers, i).name) });
}
