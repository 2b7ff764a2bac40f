import type { MessageQueue, SubscriptionData } from '../../../protocol/index.js';
import { consumerIdsOf, subscribeQueuesOf } from '../core/consumer-instance.js';
import type { OffsetStore } from '../core/offset-store.js';
import type { PullMessageService } from '../core/pull-message-service.js';
import { RebalanceImpl } from '../core/rebalance-impl.js';
import type { LitePullAssignment } from './lite-pull-assignment.js';
import type { LitePullConsumerConfig } from './lite-pull-options.js';
import type { LitePullRunning } from './lite-pull-running.js';

/** What the lite pull consumer's rebalance reads of its consumer. */
export interface RebalanceLitePullOwner {
  readonly config: LitePullConsumerConfig;
  readonly clientId: string;
  readonly offsetStore: OffsetStore;
  readonly run: LitePullRunning;
  readonly subscriptionInner: Map<string, SubscriptionData>;
  readonly assigned: LitePullAssignment;
  readonly pullService: PullMessageService;
  /** The start offset of a new queue; throws when the broker cannot be asked. */
  computePullFromWhere(mq: MessageQueue): Promise<number>;
}

/**
 * The lite pull consumer's rebalance (Java's RebalanceLitePullImpl): RebalanceImpl as it is, with the
 * same allocation strategies as the push consumer's, so a group may mix lite pull and push members.
 * No broker locks; a removed queue's offset is persisted and forgotten; a change only updates the
 * consumer's assignment.
 */
export class RebalanceLitePullImpl extends RebalanceImpl {
  constructor(owner: RebalanceLitePullOwner) {
    super({
      config: owner.config.base,
      // getters: both are read when the rebalance runs, after start() made them
      get clientId() {
        return owner.clientId;
      },
      get offsetStore() {
        return owner.offsetStore;
      },
      subscriptionTable: () => owner.subscriptionInner,
      subscribeQueues: (topic) => subscribeQueuesOf(owner.run.instance, topic),
      consumerIdList: (topic, asked) =>
        consumerIdsOf(owner.run.instance, owner.config.base.consumerGroup, topic, undefined, asked),
      computePullFromWhere: (mq) => owner.computePullFromWhere(mq).catch(() => -1),
      dispatchPullRequests: (prs) => {
        for (const pr of prs) {
          owner.assigned.add(pr, pr.nextOffset);
          owner.pullService.executePullRequestImmediately(pr);
        }
      },
      messageQueueChanged: async () => {
        // RebalanceLitePullImpl only tells the listener; queues taken away are forgotten here.
        owner.assigned.prune();
      },
    });
  }
}
