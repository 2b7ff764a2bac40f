import type { MessageExt } from '../../protocol/internal.js';
import type { ConsumerConnection } from '../../protocol/body/admin-tools-bodies.js';
import type { ClientOptions } from '../client/index.js';
import { PermName } from '../../protocol/internal.js';

/** How an AdminClient reaches the cluster: the client options of lib/client (namesrvAddr, acl, tls, timeouts). */
export type AdminClientOptions = ClientOptions;

/** One broker of `clusterList` (ClusterListSubCommand): its cluster, name, id, address and version. */
export interface ClusterBroker {
  clusterName: string;
  brokerName: string;
  brokerId: number;
  addr: string;
  /** brokerVersionDesc of GET_BROKER_RUNTIME_INFO ("V5_3_3"), or null when the broker did not answer. */
  version: string | null;
  role: 'MASTER' | 'SLAVE';
}

/** One queue of `topicStatus`. */
export interface TopicQueueStatus {
  brokerName: string;
  queueId: number;
  minOffset: number;
  maxOffset: number;
  /** Store time of the last message, 0 for an empty queue. */
  lastUpdateTimestamp: number;
}

/** A broker's part of a topic (`topicRoute`'s queue data, with the master address). */
export interface TopicRouteBroker {
  brokerName: string;
  cluster: string;
  addrs: Record<string, string>;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  /** PermName text, "RW-" style: R read, W write, X inherit. */
  permText: string;
  topicSysFlag: number;
}

/** One queue of `consumerProgress` (ConsumerProgressSubCommand). */
export interface QueueProgress {
  topic: string;
  brokerName: string;
  queueId: number;
  brokerOffset: number;
  consumerOffset: number;
  /** 5.x: max(consumer offset, the last pull's next offset); absent from 4.9 brokers. */
  pullOffset?: number | undefined;
  /** brokerOffset − consumerOffset (mqadmin's #Diff). */
  lag: number;
  /** Store time of the last consumed message; 0 = none (mqadmin prints N/A). */
  lastTimestamp: number;
}

export interface GroupProgress {
  group: string;
  queues: QueueProgress[];
  totalLag: number;
  consumeTps: number;
}

/** One client of `consumerConnection`. */
export interface GroupClient {
  clientId: string;
  clientAddr: string;
  language: string;
  /** MQVersion ordinal. */
  version: number;
}

export interface GroupConnection extends Omit<ConsumerConnection, 'connectionSet'> {
  group: string;
  clients: GroupClient[];
}

/** One row of `resetOffsetByTime`. */
export interface ResetQueue {
  brokerName: string;
  queueId: number;
  offset: number;
}

export interface ResetResult {
  /** 'broker': INVOKE_BROKER_TO_RESET_OFFSET; 'offline': the group had no client online and the broker wanted one (4.9, or 5.x with useServerSideResetOffset off), so each queue's offset was written with UPDATE_CONSUMER_OFFSET (mqadmin's ResetOffsetByTimeOldCommand). */
  mode: 'broker' | 'offline';
  queues: ResetQueue[];
}

/** Where a reset goes: the first or last offset of every queue, or the first message stored at or after a time. */
export type ResetTarget = { to: 'first' } | { to: 'last' } | { to: 'timestamp'; timestamp: number };

/** A message found by an admin lookup, with where it came from. */
export interface FoundMessage {
  brokerName: string;
  brokerAddr: string;
  message: MessageExt;
}

export interface CreateTopicArgs {
  topic: string;
  readQueueNums?: number;
  writeQueueNums?: number;
  /** Default 6 (read + write). */
  perm?: number;
  order?: boolean;
  /** Only the masters of this cluster (default: every master the name server knows). */
  clusterName?: string;
  /** Only this broker address. */
  brokerAddr?: string;
}

export interface DlqResendResult {
  group: string;
  dlqTopic: string;
  /** Messages read from the DLQ. */
  read: number;
  /** Messages sent again, by original topic. */
  resent: Record<string, number>;
  /** Messages without RETRY_TOPIC (cannot tell their original topic): not sent. */
  skipped: number;
  /** Queue offsets read, per DLQ queue (brokerName:queueId → [from, to)). */
  ranges: Record<string, [number, number]>;
}

/** The admin group the lookup pulls use, as mqadmin's DefaultMQPullConsumer (MixAll.TOOLS_CONSUMER_GROUP). */
export const TOOLS_CONSUMER_GROUP = 'TOOLS_CONSUMER';
/** PullSysFlag FLAG_SUBSCRIPTION: the pull carries its subscription expression. */
export const FLAG_SUBSCRIPTION = 0x4;
/** QueryMsgByKeySubCommand's default maxNum. */
export const DEFAULT_QUERY_MAX = 64;

/** PermName.perm2String: "R" read, "W" write, "X" inherit, "-" where not set. */
export function permText(perm: number): string {
  return `${perm & PermName.PERM_READ ? 'R' : '-'}${perm & PermName.PERM_WRITE ? 'W' : '-'}${perm & PermName.PERM_INHERIT ? 'X' : '-'}`;
}
