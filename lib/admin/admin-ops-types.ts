import type { GroupClient } from './admin-types.js';

/** Where an operation goes: one broker by address, every master of a cluster, or (neither) every master. */
export interface AdminTarget {
  brokerAddr?: string | undefined;
  clusterName?: string | undefined;
}

/** One broker's config as `getBrokerConfig` prints it. */
export interface BrokerConfigOf {
  addr: string;
  brokerName: string;
  /** 0 for a master. */
  brokerId: number;
  /** Every key and value, keys sorted. */
  config: Record<string, string>;
  /** The config's data version, as the broker's JSON (`{"counter":…,"timestamp":…}`). */
  version: string | null;
}

/** What `wipeWritePerm` / `addWritePerm` did on one name server. */
export interface WritePermResult {
  namesrvAddr: string;
  /** Topic routes of the broker changed there. */
  topicCount: number;
}

/** `producerConnection`: the producers of a group the broker knows. */
export interface ProducerConnectionInfo {
  group: string;
  /** The broker asked. */
  addr: string;
  clients: GroupClient[];
}

/** `updateTopicPerm` on one broker. */
export interface TopicPermChange {
  addr: string;
  brokerName: string;
  oldPerm: number;
  perm: number;
  /** false when the broker already had that perm (mqadmin: "new perm equals to the old one!"). */
  changed: boolean;
}
