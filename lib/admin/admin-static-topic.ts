import {
  Operations,
  PermName,
  ResponseCode,
  STATIC_TOPIC_GLOBAL_SCOPE,
  type ClusterInfo,
  type LogicQueueMappingItem,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type TopicConfigBody,
  type TopicQueueMappingDetail,
} from '../../protocol/internal.js';
import type { Reply } from '../client/index.js';
import { BrokerError } from '../remoting/index.js';
import { StaticTopicError } from './errors.js';

/**
 * What `updateStaticTopic` (mqadmin `updateStaticTopic`) is given: the topic, its logic queues in
 * all, and the brokers to place new logic queues on, by name or by cluster.
 * @category Admin
 */
export interface UpdateStaticTopicArgs {
  topic: string;
  /** Logic queues in all; more than the topic has (a static topic never shrinks). */
  queueNums: number;
  /** Broker names to place new logic queues on (mqadmin `-b`). One of `brokers` / `clusters`. */
  brokers?: string[];
  /** Every broker of these clusters (mqadmin `-c`). */
  clusters?: string[];
}

/**
 * What `updateStaticTopic` wrote: the new epoch and, for every broker written, the logic queues it
 * leads (an empty list for the brokers of the same clusters that lead none, which get the mapping
 * too, as mqadmin's completeNoTargetBrokers does).
 * @category Admin
 */
export interface StaticTopicUpdate {
  topic: string;
  epoch: number;
  totalQueues: number;
  brokers: Array<{ brokerName: string; addr: string; logicQueues: number[] }>;
}

/** A broker's topic config and mapping, as GET_TOPIC_CONFIG with `lo` answers (TopicConfigAndQueueMapping). */
interface ConfigAndMapping {
  config: TopicConfigBody;
  mapping: TopicQueueMappingDetail;
}

/** What the operation needs of the AdminClient. */
export interface StaticTopicHost {
  call<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
  ): Promise<Reply<O>>;
  clusterInfo(): Promise<ClusterInfo>;
  now(): number;
}

const fail = (topic: string, why: string): never => {
  throw new StaticTopicError(topic, why);
};

function masterOf(info: ClusterInfo, topic: string, broker: string): string {
  return info.brokerAddrTable[broker]?.brokerAddrs['0'] ?? fail(topic, `broker ${broker} has no master address`);
}

/** A broker that hosts no queue of the topic yet: a read-write config with no queues and an empty mapping. */
function emptyHosting(topic: string, broker: string, totalQueues: number, epoch: number): ConfigAndMapping {
  return {
    config: {
      topicName: topic,
      readQueueNums: 0,
      writeQueueNums: 0,
      perm: PermName.PERM_READ | PermName.PERM_WRITE,
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0,
      order: false,
    },
    mapping: {
      topic,
      scope: STATIC_TOPIC_GLOBAL_SCOPE,
      totalQueues,
      bname: broker,
      epoch,
      dirty: false,
      currIdMap: {},
      hostedQueues: {},
    },
  };
}

function leaderOf(items: LogicQueueMappingItem[]): LogicQueueMappingItem | undefined {
  return items[items.length - 1];
}

/**
 * The topic's config and mapping on every broker that has the topic (MQAdminUtils.examineTopicConfigAll),
 * checked as TopicQueueMappingUtils.checkNameEpochNumConsistence checks them.
 */
async function readAll(
  host: StaticTopicHost,
  info: ClusterInfo,
  topic: string,
): Promise<Map<string, ConfigAndMapping>> {
  const out = new Map<string, ConfigAndMapping>();
  for (const broker of Object.keys(info.brokerAddrTable).sort()) {
    const addr = info.brokerAddrTable[broker]!.brokerAddrs['0'];
    if (!addr) continue;
    let config: TopicConfigBody | null;
    try {
      config = (await host.call(addr, Operations.GET_TOPIC_CONFIG, { topic, lo: true })).body;
    } catch (err) {
      if (err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST) continue;
      throw err;
    }
    if (!config) continue;
    const mapping = config.mappingDetail ?? fail(topic, `broker ${broker} has it as a normal topic (no mapping)`);
    if (mapping.bname !== broker) fail(topic, `broker ${broker} holds the mapping of ${mapping.bname}`);
    if (mapping.dirty) fail(topic, `the mapping on broker ${broker} is dirty`);
    if (mapping.topic !== topic) fail(topic, `broker ${broker} maps topic ${mapping.topic}`);
    out.set(broker, { config, mapping });
  }
  const first = out.values().next().value;
  for (const [broker, { mapping }] of out) {
    if (mapping.scope !== first!.mapping.scope)
      fail(topic, `scope ${mapping.scope} on ${broker} != ${first!.mapping.scope}`);
    if (mapping.epoch !== first!.mapping.epoch)
      fail(topic, `epoch ${mapping.epoch} on ${broker} != ${first!.mapping.epoch}`);
    if (mapping.totalQueues !== first!.mapping.totalQueues)
      fail(topic, `total queues ${mapping.totalQueues} on ${broker} != ${first!.mapping.totalQueues}`);
  }
  return out;
}

/** Logic queue id → the broker leading it, each id led once and ids 0..totalQueues-1 all led (checkAndBuildMappingItems). */
function ledQueues(topic: string, configs: Map<string, ConfigAndMapping>): Map<number, string> {
  const led = new Map<number, string>();
  let total = 0;
  for (const [broker, { mapping }] of configs) {
    total = Math.max(total, mapping.totalQueues);
    for (const [id, items] of Object.entries(mapping.hostedQueues)) {
      if (leaderOf(items)?.bname !== broker) continue;
      if (led.has(Number(id))) fail(topic, `logic queue ${id} is led by both ${led.get(Number(id))} and ${broker}`);
      led.set(Number(id), broker);
    }
  }
  for (let i = 0; i < total; i++) if (!led.has(i)) fail(topic, `logic queue ${i} is led by no broker`);
  if (led.size !== total) fail(topic, `${led.size} logic queues are led, the mapping says ${total}`);
  return led;
}

/**
 * mqadmin `updateStaticTopic` without a map file: reads the topic's mapping from every broker,
 * places the new logic queues on the least loaded target brokers (each new one a new physical queue
 * there), gives every mapping a new epoch, and sends UPDATE_AND_CREATE_STATIC_TOPIC (513) to every
 * broker concerned, the brokers of the same clusters that lead nothing included. Creating and
 * growing only: moving logic queues is mqadmin's `remappingStaticTopic`.
 */
export async function updateStaticTopic(
  host: StaticTopicHost,
  args: UpdateStaticTopicArgs,
): Promise<StaticTopicUpdate> {
  const { topic, queueNums } = args;
  if (!Number.isInteger(queueNums) || queueNums < 1) fail(topic, `queueNums ${queueNums} is not a positive integer`);
  const info = await host.clusterInfo();
  const targets = new Set<string>(args.brokers ?? []);
  for (const c of args.clusters ?? []) for (const b of info.clusterAddrTable[c] ?? []) targets.add(b);
  if (targets.size === 0) fail(topic, 'no target broker (give brokers or clusters the name server knows)');

  const configs = await readAll(host, info, topic);
  const led = ledQueues(topic, configs);
  const oldEpoch = configs.size > 0 ? configs.values().next().value!.mapping.epoch : -1;
  for (const [broker, { mapping }] of configs)
    if (Object.keys(mapping.hostedQueues).length > 0 && !targets.has(broker))
      fail(topic, `broker ${broker} hosts logic queues but is not a target`);
  if (queueNums < led.size) fail(topic, `a static topic cannot shrink (${queueNums} < ${led.size})`);
  if (queueNums === led.size) fail(topic, `it has ${queueNums} logic queues already`);
  for (const b of configs.keys()) targets.add(b);

  // Least loaded broker first, as TopicQueueMappingUtils.MappingAllocator; ties go by name where
  // Java shuffles them.
  const load = new Map<string, number>([...targets].map((b) => [b, 0]));
  for (const b of led.values()) load.set(b, (load.get(b) ?? 0) + 1);
  const now = host.now();
  const epoch = Math.max(oldEpoch + 1000, now);
  for (let id = led.size; id < queueNums; id++) {
    const broker = [...load].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
    load.set(broker, load.get(broker)! + 1);
    let c = configs.get(broker);
    if (!c) {
      c = emptyHosting(topic, broker, 0, now);
      configs.set(broker, c);
    }
    c.config.writeQueueNums++;
    c.config.readQueueNums++;
    c.mapping.hostedQueues[id] = [
      {
        gen: 0,
        queueId: c.config.writeQueueNums - 1,
        bname: broker,
        logicOffset: 0,
        startOffset: 0,
        endOffset: -1,
        timeOfStart: -1,
        timeOfEnd: -1,
      },
    ];
  }
  // Brokers of the same clusters that lead nothing learn the mapping too (completeNoTargetBrokers).
  for (const names of Object.values(info.clusterAddrTable)) {
    if (!names.some((n) => configs.has(n))) continue;
    for (const b of names) if (!configs.has(b)) configs.set(b, emptyHosting(topic, b, queueNums, epoch));
  }
  const written: StaticTopicUpdate['brokers'] = [];
  // Every master is checked before anything is written: a half-applied mapping is worse than none.
  const addrs = new Map([...configs.keys()].map((b) => [b, masterOf(info, topic, b)]));
  for (const [broker, { config, mapping }] of [...configs].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    mapping.epoch = epoch;
    mapping.totalQueues = queueNums;
    const addr = addrs.get(broker)!;
    await host.call(
      addr,
      Operations.UPDATE_AND_CREATE_STATIC_TOPIC,
      {
        topic,
        defaultTopic: 'TBW102',
        readQueueNums: config.readQueueNums,
        writeQueueNums: config.writeQueueNums,
        perm: config.perm,
        topicFilterType: config.topicFilterType,
        topicSysFlag: config.topicSysFlag,
        order: config.order,
        force: false,
      },
      mapping,
    );
    const logicQueues = Object.entries(mapping.hostedQueues)
      .filter(([, items]) => leaderOf(items)?.bname === broker)
      .map(([id]) => Number(id))
      .sort((a, b) => a - b);
    written.push({ brokerName: broker, addr, logicQueues });
  }
  return { topic, epoch, totalQueues: queueNums, brokers: written };
}
