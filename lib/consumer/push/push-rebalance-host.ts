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
>;

/**
 * The push consumer as its rebalance sees it (RebalanceHost): routes and the group's client ids
 * from the client instance, start offsets and queue locks from the masters (`calls`), new pull
 * requests into the pull service, `messageQueueChanged` after a round changed a topic, the orderly
 * service's idle wait, and QUERY_ASSIGNMENT through the POP service when there is one.
 */
export function pushRebalanceHost(
  c: PushRebalanceOwner,
  calls: PushBrokerCalls,
  messageQueueChanged: (topic: string) => Promise<void>,
  pop: PopConsumeService | null,
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
    consumerIdList: (topic) =>
      consumerIdsOf(c.run.instance, c.config.consumerGroup, topic, {
        answered: (brokerName, addr) => c.events.brokerAnswered(brokerName, addr, 'GET_CONSUMER_LIST_BY_GROUP'),
        failed: (brokerName, addr, err) => c.events.brokerFailed(brokerName, addr, 'GET_CONSUMER_LIST_BY_GROUP', err),
      }),
    computePullFromWhere: (mq) => calls.computePullFromWhere(mq),
    lockBatch: (brokerName, mqs) => calls.lockBatch(brokerName, mqs),
    hasMaster: (brokerName) => c.instance?.findBrokerMasterAddress(brokerName) != null,
    unlockBatch: (brokerName, mqs, oneway) => calls.unlockBatch(brokerName, mqs, oneway),
    brokerOf: (mq) => (c.instance ? brokerNameOf(c.instance, mq) : mq.brokerName),
    dispatchPullRequests: (prs) => {
      for (const pr of prs) c.pullService.executePullRequestImmediately(pr);
    },
    messageQueueChanged: (topic) => messageQueueChanged(topic),
    awaitConsumeIdle: (pq, timeoutMs) =>
      c.running?.consume.orderly ? c.running.consume.service.awaitConsumeIdle(pq, timeoutMs) : Promise.resolve(true),
    serverAssignment: pop ? (topic) => pop.query(topic) : undefined,
  };
}
