/**
 * What the raw pull floors (raw-pull-peer.ts, latency-floor.ts) share: the request stamp they send
 * as (Java's 4.9.8 client, JSON headers), the route as one name-server query, and the long-poll
 * PULL_MESSAGE they keep in flight for each queue.
 */
import {
  decodeCommand,
  MQVersion,
  Operations,
  PullSysFlag,
  ResponseCode,
  type MessageQueue,
  type RemotingCommand,
} from '../../protocol/index.js';
import {
  decodeResponseHeader,
  decodeResponseBody,
  isAnswer,
  operationRequest,
  type RequestStamp,
} from '../../lib/client/operation-call.js';
import { topicRouteToSubscribeQueues } from '../../lib/client/topic-route.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { CliError } from '../../lib/cli/common.js';

export const FLOOR_PULL_BATCH = 32;
export const FLOOR_STAMP: RequestStamp = { language: 'JAVA', version: MQVersion.V4_9_8, serializeType: 'JSON' };

/** The topic's readable queues with their master's address, from the first name server. */
export async function floorRoute(namesrv: string, topic: string): Promise<{ mq: MessageQueue; addr: string }[]> {
  const client = new RemotingClient();
  try {
    const addr = namesrv.split(';')[0]!.trim();
    const op = Operations.GET_ROUTEINFO_BY_TOPIC;
    const res = await client.invoke(addr, operationRequest(op, { topic }, undefined, FLOOR_STAMP), {
      timeoutMs: 5000,
    });
    const r = res.code === ResponseCode.SUCCESS ? decodeResponseBody(op, res) : null;
    if (r === null) throw new CliError(`no route for ${topic}: code ${res.code} ${res.remark ?? ''}`);
    const masters = new Map(r.brokerDatas.map((b) => [b.brokerName, b.brokerAddrs['0']]));
    return topicRouteToSubscribeQueues(topic, r)
      .filter((mq) => masters.get(mq.brokerName))
      .map((mq) => ({ mq, addr: masters.get(mq.brokerName)! }));
  } finally {
    await client.close();
  }
}

/** A long poll (15 s) of `mq` from `offset` carrying its own subscription (`*`), committing nothing. */
export function floorPullRequest(
  group: string,
  topic: string,
  mq: MessageQueue,
  offset: number,
  subVersion: number,
): RemotingCommand {
  return operationRequest(
    Operations.PULL_MESSAGE,
    {
      consumerGroup: group,
      topic,
      queueId: mq.queueId,
      queueOffset: offset,
      maxMsgNums: FLOOR_PULL_BATCH,
      sysFlag: PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_SUBSCRIPTION,
      commitOffset: 0,
      suspendTimeoutMillis: 15_000,
      subVersion,
      subscription: '*',
      expressionType: 'TAG',
      bname: mq.brokerName,
    },
    undefined,
    FLOOR_STAMP,
  );
}

/**
 * The pull answer in `frame`: the queue it answers (taken out of `byOpaque`), the answer and its next
 * offset; null for a frame that answers no pull of ours. A refusal or PULL_OFFSET_MOVED is a CliError.
 */
export function floorPullAnswer(
  frame: Buffer,
  byOpaque: Map<number, MessageQueue>,
  addr: string,
): { mq: MessageQueue; res: RemotingCommand; nextBeginOffset: number } | null {
  const res = decodeCommand(frame);
  const mq = byOpaque.get(res.opaque);
  if (mq === undefined) return null;
  byOpaque.delete(res.opaque);
  if (!isAnswer(Operations.PULL_MESSAGE, res.code) || res.code === ResponseCode.PULL_OFFSET_MOVED) {
    throw new CliError(`pull of queue ${mq.queueId} from ${addr} failed: code ${res.code} ${res.remark ?? ''}`);
  }
  return { mq, res, nextBeginOffset: decodeResponseHeader(Operations.PULL_MESSAGE, res, addr).nextBeginOffset };
}
