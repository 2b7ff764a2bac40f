import { isRetryTopic, messageQueue, type MessageQueue } from '../../../protocol/internal.js';
import { brokerNameOf, topicRouteToSubscribeQueues, type MQClientInstance } from '../../client/index.js';
import { BrokerAddressNotFoundError, ConsumerStateError } from '../errors.js';
import type { ConsumerState } from '../core/lifecycle.js';
import {
  defaultLocalOffsetStoreDir,
  LocalFileOffsetStore,
  RemoteBrokerOffsetStore,
  type OffsetStore,
} from '../core/offset-store.js';
import { queueKeyOf } from './lite-pull-assignment.js';
import type { LitePullConsumerConfig } from './lite-pull-options.js';
import type { LitePullRunning } from './lite-pull-running.js';

const ADMIN_OFFSET_TIMEOUT_MS = 6000;

/** What the lite pull consumer's broker calls read of it. */
export interface LitePullBrokerCallsHost {
  readonly config: LitePullConsumerConfig;
  readonly state: ConsumerState;
  readonly run: LitePullRunning;
  readonly offsetStore: OffsetStore;
}

/**
 * The lite pull consumer's requests to the master of a queue's broker (any address of it when the
 * master is not in the route): consumer offsets, min / max offsets, offsets by timestamp, routes.
 */
export class LitePullBrokerCalls {
  /** CONSUME_FROM_TIMESTAMP's timestamp, set by start(). */
  consumeTimestampMs = 0;

  constructor(private readonly host: LitePullBrokerCallsHost) {}

  /** CLUSTERING: offsets at the masters, through these calls; BROADCASTING: a local file per client id and group. */
  newOffsetStore(instance: MQClientInstance): OffsetStore {
    const base = this.host.config.base;
    return base.messageModel === 'CLUSTERING'
      ? new RemoteBrokerOffsetStore({
          queryConsumerOffset: (mq) =>
            this.withMaster(mq, (addr) => instance.queryConsumerOffset(addr, base.consumerGroup, mq, 5000)),
          updateConsumerOffsetOneway: async (mq, offset) => {
            const addr = this.masterAddress(instance, brokerNameOf(instance, mq));
            if (addr) await instance.updateConsumerOffsetOneway(addr, base.consumerGroup, mq, offset);
          },
        })
      : new LocalFileOffsetStore(
          base.offsetStoreDir ?? defaultLocalOffsetStoreDir(),
          instance.clientId,
          base.consumerGroup,
        );
  }

  private masterAddress(instance: MQClientInstance, brokerName: string): string | undefined {
    return instance.findBrokerMasterAddress(brokerName) ?? instance.findBrokerAddress(brokerName);
  }

  async withMaster<T>(mq: MessageQueue, call: (addr: string) => Promise<T>): Promise<T> {
    const instance = this.host.run.instance;
    // A static topic's logic queue: its leader (static-topic.ts).
    let addr = this.masterAddress(instance, brokerNameOf(instance, mq));
    if (!addr) {
      await instance.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
      addr = this.masterAddress(instance, brokerNameOf(instance, mq));
    }
    if (!addr) throw new BrokerAddressNotFoundError(brokerNameOf(instance, mq));
    return call(addr);
  }

  minOffset(mq: MessageQueue): Promise<number> {
    return this.withMaster(mq, (addr) => this.host.run.instance.getMinOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS));
  }

  maxOffset(mq: MessageQueue): Promise<number> {
    return this.withMaster(mq, (addr) => this.host.run.instance.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS));
  }

  /** SEARCH_OFFSET_BY_TIMESTAMP. */
  offsetForTimestamp(mq: MessageQueue, timestampMs: number): Promise<number> {
    return this.withMaster(mq, (addr) =>
      this.host.run.instance.searchOffsetByTimestamp(addr, mq, timestampMs, ADMIN_OFFSET_TIMEOUT_MS),
    );
  }

  /** The topic's readable queues from a fresh route. */
  async fetchMessageQueues(topic: string): Promise<MessageQueue[]> {
    const route = await this.host.run.instance.getTopicRoute(topic, { refresh: true });
    return topicRouteToSubscribeQueues(topic, route).map((q) => messageQueue(q.topic, q.brokerName, q.queueId));
  }

  /**
   * RebalanceLitePullImpl.computePullFromWhereWithException: the committed offset (memory first, then
   * the broker), else where consumeFromWhere says. Throws when the broker cannot be asked.
   */
  async computePullFromWhere(mq: MessageQueue): Promise<number> {
    const last = await this.host.offsetStore.readOffset(mq, 'memory_then_store');
    if (last >= 0) return last;
    if (last !== -1)
      throw new ConsumerStateError(this.host.state, `the committed offset of ${queueKeyOf(mq)} could not be read`);
    const retry = isRetryTopic(mq.topic);
    switch (this.host.config.base.consumeFromWhere) {
      case 'CONSUME_FROM_FIRST_OFFSET':
        return 0;
      case 'CONSUME_FROM_TIMESTAMP':
        if (retry) return this.maxOffset(mq);
        return this.offsetForTimestamp(mq, this.consumeTimestampMs);
      default:
        return retry ? 0 : this.maxOffset(mq);
    }
  }
}
