import type { MessageRequestMode } from '../../protocol/body/pop-bodies.js';
import type { AdminOps } from './admin-ops.js';
import type {
  AdminTarget,
  BrokerConfigOf,
  ProducerConnectionInfo,
  TopicPermChange,
  WritePermResult,
} from './admin-ops-types.js';
import type { ResetResult } from './admin-types.js';
import { AdminStatsCommands } from './admin-stats.js';

const OPS = new WeakMap<AdminOperatorCommands, AdminOps>();

/** Gives an AdminClient its operator commands (admin-client.ts calls it once, in its constructor). */
export function bindAdminOps(client: AdminOperatorCommands, ops: AdminOps): void {
  OPS.set(client, ops);
}

function opsOf(client: AdminOperatorCommands): AdminOps {
  // bound in AdminClient's constructor before any method can be called
  return OPS.get(client)!;
}

/**
 * The operator commands of mqadmin beside its reads, which AdminClient has through this class
 * (admin-ops.ts does them): a group switched to POP, broker config, producer connections, a
 * broker's write permission on the name servers, a topic's perm, offsets cloned from another group
 * and a backlog skipped; and, from AdminStatsCommands (admin-stats.ts), statsAll.
 * @category Admin
 */
export abstract class AdminOperatorCommands extends AdminStatsCommands {
  /**
   * `setConsumeMode` (SET_MESSAGE_REQUEST_MODE 401): how `group` consumes `topic` — `'POP'` makes
   * 5.x brokers assign it POP (consumers asking QUERY_ASSIGNMENT pop instead of pulling), `'PULL'`
   * switches it back. Written on one broker (`brokerAddr`), every master of a cluster, or every
   * master of the topic's route. `popShareQueueNum` (default 0: every client pops every queue). Returns the addresses
   * written; UnknownTopicError when a broker lacks the topic.
   */
  setConsumeMode(
    group: string,
    topic: string,
    mode: MessageRequestMode,
    opts: AdminTarget & { popShareQueueNum?: number } = {},
  ): Promise<string[]> {
    return opsOf(this).setConsumeMode(group, topic, mode, opts);
  }

  /**
   * `getBrokerConfig` (GET_BROKER_CONFIG 26): the config of one broker (`brokerAddr`), or of every
   * broker, masters and slaves, of a cluster (of every cluster when neither is given).
   */
  brokerConfig(target: AdminTarget = {}): Promise<BrokerConfigOf[]> {
    return opsOf(this).brokerConfig(target);
  }

  /**
   * `updateBrokerConfig` (UPDATE_BROKER_CONFIG 25): the given keys set on one broker, every master
   * of a cluster (with `includeSlaves`, its slaves too: mqadmin's -a), or every master. A broker
   * ignores a key it does not have; one on its configBlackList is refused whole
   * (AdminPermissionError). Returns the addresses written.
   */
  updateBrokerConfig(
    props: Readonly<Record<string, string>>,
    target: AdminTarget & { includeSlaves?: boolean } = {},
  ): Promise<string[]> {
    return opsOf(this).updateBrokerConfig(props, target);
  }

  /**
   * `producerConnection` (GET_PRODUCER_CONNECTION_LIST 204): the producers of `group` online at a
   * broker of `topic`'s route; UnknownProducerGroupError when none.
   */
  producerConnection(group: string, topic: string): Promise<ProducerConnectionInfo> {
    return opsOf(this).producerConnection(group, topic);
  }

  /**
   * `wipeWritePerm` (WIPE_WRITE_PERM_OF_BROKER 205, to every name server): the broker's topic routes
   * lose write permission, so producers send to other brokers while consumers drain it. The
   * broker's own topic configs stay; `addWritePerm` undoes it.
   */
  wipeWritePerm(brokerName: string): Promise<WritePermResult[]> {
    return opsOf(this).wipeWritePerm(brokerName);
  }

  /** `addWritePerm` (ADD_WRITE_PERM_OF_BROKER 327, to every name server): the broker's topic routes set to read and write (6). */
  addWritePerm(brokerName: string): Promise<WritePermResult[]> {
    return opsOf(this).addWritePerm(brokerName);
  }

  /**
   * `updateTopicPerm`: the topic's route read, then UPDATE_AND_CREATE_TOPIC with `perm` (2 write, 4
   * read, 6 both) and each broker's queue counts, on one master (left alone when it has that perm
   * already), a cluster's masters, or every master of the route.
   */
  updateTopicPerm(topic: string, perm: number, target: AdminTarget = {}): Promise<TopicPermChange[]> {
    return opsOf(this).updateTopicPerm(topic, perm, target);
  }

  /**
   * CLONE_GROUP_OFFSET (314) on every broker of `srcGroup`: its committed offsets of `topic` copied
   * over `destGroup`'s (a new group starts where another is). With `offline` false (the default) a
   * broker skips a topic the online source group does not subscribe to. Returns the brokers asked.
   */
  cloneGroupOffset(
    srcGroup: string,
    destGroup: string,
    topic: string,
    opts: { offline?: boolean } = {},
  ): Promise<string[]> {
    return opsOf(this).cloneGroupOffset(srcGroup, destGroup, topic, opts);
  }

  /**
   * `skipAccumulatedMessage`: every queue of the topic set to its max offset for the group (its
   * backlog skipped, nothing consumed), running or stopped: resetOffset to 'last'.
   */
  skipAccumulatedMessage(group: string, topic: string): Promise<ResetResult> {
    return opsOf(this).skipAccumulatedMessage(group, topic);
  }
}
