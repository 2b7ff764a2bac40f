import { javaStringHash } from '../java-hash.js';
import { toJavaJson } from '../json/java-json.js';
import type { HeartbeatData } from './heartbeat-data.js';

/**
 * The fingerprint of a heartbeat (RocketMQ 5.x heartbeat V2, Java's
 * HeartbeatData#computeHeartbeatFingerprint): String.hashCode of the heartbeat's JSON with the
 * client id blanked, every subVersion 0, `heartbeatFingerprint` 0 and `withoutSub` false. So it
 * changes with the groups and their subscriptions, not with the client or a rebalance's new
 * subVersion, and two members of a group that subscribe alike get the same one. The broker keeps
 * the last fingerprint per group and answers IS_SUB_CHANGE when another comes in; 0 means "no
 * V2" to it.
 *
 * Java hashes its HashSets in their iteration order, and its ConsumerData and ProducerData have
 * identity hash codes, so its fingerprint of a process with two groups can change from one
 * heartbeat to the next. Here groups, producers and subscriptions are sorted by name first: the
 * fingerprint is a function of the content only. It equals Java's when the orders coincide (one
 * consumer group, one producer group), which the broker never needs: it only compares a group's
 * fingerprints with each other.
 */
export function computeHeartbeatFingerprint(hb: HeartbeatData): number {
  const byName = <T extends { groupName: string }>(a: T, b: T) => compare(a.groupName, b.groupName);
  const consumerDataSet = hb.consumerDataSet
    .map((cd) => ({
      ...cd,
      subscriptionDataSet: cd.subscriptionDataSet
        .map((sd) => ({ ...sd, subVersion: 0 }))
        .sort((a, b) => compare(a.topic, b.topic) || compare(a.subString, b.subString)),
    }))
    .sort(byName);
  const canonical: HeartbeatData = {
    clientID: '',
    consumerDataSet,
    producerDataSet: [...hb.producerDataSet].sort(byName),
    heartbeatFingerprint: 0,
    withoutSub: false,
  };
  return javaStringHash(toJavaJson(canonical));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
