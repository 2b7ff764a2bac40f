import type { Operations, OperationRequest, TopicRouteData } from '../../protocol/internal.js';
import type { ConsumeStats } from '../../protocol/body/broker-admin-bodies.js';
import { BrokerError } from '../remoting/index.js';
import type { QueueProgress } from './admin-types.js';

/** The master of each broker of a route, in broker-name order (a broker whose master is down is left out). */
export function routeMasters(route: TopicRouteData): Array<{ brokerName: string; addr: string }> {
  const out: Array<{ brokerName: string; addr: string }> = [];
  for (const bd of [...route.brokerDatas].sort((a, b) => (a.brokerName < b.brokerName ? -1 : 1))) {
    const addr = bd.brokerAddrs['0'];
    if (addr) out.push({ brokerName: bd.brokerName, addr });
  }
  return out;
}

/** GET_CONSUME_STATS of a group on every master of a route, as consumerProgress and statsAll read it. */
export interface GroupConsumeStats {
  /** Every queue the answering brokers report, in broker-name order (not sorted further). */
  queues: QueueProgress[];
  /** The brokers' consumeTps, summed. */
  consumeTps: number;
  /** Whether a broker answered an error (one without the group's offsets does); its queues are missing. */
  refused: boolean;
}

/**
 * DefaultMQAdminExtImpl#examineConsumeStats: GET_CONSUME_STATS of `group` (only `topic` when given)
 * on every master of `route`, the group's retry-topic route as a rule. `call` makes one request
 * (the caller's, which maps a NO_PERMISSION answer); a BrokerError answer marks the result refused
 * and the walk goes on, any other failure is thrown.
 */
export async function examineConsumeStats(
  call: (
    addr: string,
    header: OperationRequest<typeof Operations.GET_CONSUME_STATS>,
  ) => Promise<{ body: ConsumeStats | null }>,
  route: TopicRouteData,
  group: string,
  topic?: string,
): Promise<GroupConsumeStats> {
  const result: GroupConsumeStats = { queues: [], consumeTps: 0, refused: false };
  for (const { addr } of routeMasters(route)) {
    let stats: ConsumeStats | null;
    try {
      stats = (await call(addr, topic === undefined ? { consumerGroup: group } : { consumerGroup: group, topic })).body;
    } catch (err) {
      if (!(err instanceof BrokerError)) throw err;
      result.refused = true;
      continue;
    }
    if (!stats) continue;
    result.consumeTps += stats.consumeTps;
    for (const [mq, w] of stats.offsetTable) {
      result.queues.push({
        topic: mq.topic,
        brokerName: mq.brokerName,
        queueId: mq.queueId,
        brokerOffset: w.brokerOffset,
        consumerOffset: w.consumerOffset,
        pullOffset: w.pullOffset,
        lag: w.brokerOffset - w.consumerOffset,
        lastTimestamp: w.lastTimestamp,
      });
    }
  }
  return result;
}
