import { brokerNameOf } from '../../client/index.js';
import { consumerIdsOf, subscribeQueuesOf } from '../core/consumer-instance.js';
import type { PopConsumeService } from '../pop/pop-consume-service.js';
import type { PushBrokerCalls } from './push-broker-calls.js';
import type { PushHost } from './push-host.js';
import type { RebalanceHost } from './rebalance-push-impl.js';

/** What the push consumer's rebalance host reads of the consumer. */
export type PushRebalanceOwner = Pick<
  PushHost,
  | 'config'
  | 'clientId'
  | 'offsetStore'
  | 'subscriptionInner'
  | 'run'
  | 'events'
  | 'instance'
  | 'pullService'
  | 'running'
  | 'recorder'
  | 'instr'
  | 'rebalance'
>;

/**
 * The push consumer as its rebalance sees it (RebalanceHost): routes and the group's client ids
 * from the client instance, start offsets and queue locks from the masters (`calls`), new pull
 * requests into the pull service, the 'rebalance' event for each topic a round changed and
 * `roundChanged` once after the round (new subVersions, per-queue limits, one heartbeat, before the
 * round's new pulls), the orderly service's idle wait, and QUERY_ASSIGNMENT through the POP service
 * when there is one.
 */
export function pushRebalanceHost(
  c: PushRebalanceOwner,
  calls: PushBrokerCalls,
  pop: PopConsumeService | null,
  roundChanged: (topics: string[]) => Promise<void>,
): RebalanceHost {
  return {
    config: c.config,
    // getters: both are read when the rebalance runs, after start() made them
    get clientId() {
      return c.clientId;
    },
    get offsetStore() {
      return c.offsetStore;
    },
    subscriptionTable: () => c.subscriptionInner,
    subscribeQueues: (topic) => subscribeQueuesOf(c.run.instance, topic),
    consumerIdList: (topic, asked) =>
      consumerIdsOf(
        c.run.instance,
        c.config.consumerGroup,
        topic,
        {
          answered: (brokerName, addr) => c.events.brokerAnswered(brokerName, addr, 'GET_CONSUMER_LIST_BY_GROUP'),
          failed: (brokerName, addr, err) => c.events.brokerFailed(brokerName, addr, 'GET_CONSUMER_LIST_BY_GROUP', err),
        },
        asked,
      ),
    computePullFromWhere: (mq) => calls.computePullFromWhere(mq),
    lockBatch: (brokerName, mqs) => calls.lockBatch(brokerName, mqs),
    hasMaster: (brokerName) => c.instance?.findBrokerMasterAddress(brokerName) != null,
    unlockBatch: (brokerName, mqs, oneway) => calls.unlockBatch(brokerName, mqs, oneway),
    brokerOf: (mq) => (c.instance ? brokerNameOf(c.instance, mq) : mq.brokerName),
    dispatchPullRequests: (prs) => {
      for (const pr of prs) c.pullService.executePullRequestImmediately(pr);
    },
    messageQueueChanged: async (topic) => messageQueueChanged(c, topic),
    roundChanged: (topics) => roundChanged(topics),
    awaitConsumeIdle: (pq, timeoutMs) =>
      c.running?.consume.orderly ? c.running.consume.service.awaitConsumeIdle(pq, timeoutMs) : Promise.resolve(true),
    serverAssignment: pop ? (topic) => pop.query(topic) : undefined,
  };
}

/** A round changed `topic`'s queues: the 'rebalance' event with the queues now held. */
function messageQueueChanged(c: PushRebalanceOwner, topic: string): void {
  c.recorder.rebalances++;
  c.instr.rebalanced(
    topic,
    [...c.rebalance.processQueueTable.values()].filter((e) => e.mq.topic === topic && !e.pq.dropped).map((e) => e.mq),
  );
}
