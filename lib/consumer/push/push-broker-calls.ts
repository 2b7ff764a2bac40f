import createDebug from '../../debug.js';
import { isRetryTopic, type MessageQueue } from '../../../protocol/internal.js';
import { BrokerAddressNotFoundError } from '../errors.js';
import { brokerNameOf, type MQClientInstance } from '../../client/index.js';
import {
  defaultLocalOffsetStoreDir,
  LocalFileOffsetStore,
  RemoteBrokerOffsetStore,
  type OffsetStore,
} from '../core/offset-store.js';
import type { PushHost } from './push-host.js';

const log = createDebug('rocketwire:consumer');

const OFFSET_API_TIMEOUT_MS = 5000;
const ADMIN_OFFSET_TIMEOUT_MS = 6000;
const LOCK_TIMEOUT_MS = 1000;

/**
 * The push consumer's requests to the master of a queue's broker: consumer offsets (the offset
 * store's and the start offset of a new queue) and the orderly queue locks; and the offset store. Each reports the broker
 * that answered or failed as the consumer's brokerReachable / brokerError events.
 */
export class PushBrokerCalls {
  /** CONSUME_FROM_TIMESTAMP's timestamp, set by start(). */
  consumeTimestampMs = 0;

  constructor(private readonly host: Pick<PushHost, 'config' | 'events' | 'instr' | 'run' | 'offsetStore'>) {}

  /** CLUSTERING: offsets at the masters, through these calls; BROADCASTING: a local file per client id and group. */
  newOffsetStore(instance: MQClientInstance): OffsetStore {
    const { config } = this.host;
    return config.messageModel === 'CLUSTERING'
      ? new RemoteBrokerOffsetStore({
          queryConsumerOffset: (mq) => this.queryConsumerOffset(mq),
          updateConsumerOffsetOneway: (mq, offset) => this.updateConsumerOffsetOneway(mq, offset),
          warn: (m) => config.logger.warn(`consumer ${config.consumerGroup}: ${m}`),
        })
      : new LocalFileOffsetStore(
          config.offsetStoreDir ?? defaultLocalOffsetStoreDir(),
          instance.clientId,
          config.consumerGroup,
        );
  }

  /** Master address, else any address of the broker (Java's findBrokerAddressInSubscribe(name, MASTER_ID, false): offsets). */
  masterAddress(brokerName: string): string | undefined {
    return (
      this.host.run.instance.findBrokerMasterAddress(brokerName) ?? this.host.run.instance.findBrokerAddress(brokerName)
    );
  }

  /** The broker a request about `mq` goes to: a static topic's logic queue to its leader (static-topic.ts). */
  brokerOf(mq: MessageQueue): string {
    return brokerNameOf(this.host.run.instance, mq);
  }

  async masterAddressOrRefresh(mq: MessageQueue): Promise<string> {
    let addr = this.masterAddress(this.brokerOf(mq));
    if (!addr) {
      await this.host.run.instance.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
      addr = this.masterAddress(this.brokerOf(mq));
    }
    if (!addr) throw new BrokerAddressNotFoundError(this.brokerOf(mq));
    return addr;
  }

  async queryConsumerOffset(mq: MessageQueue): Promise<number> {
    let addr: string | undefined;
    try {
      addr = await this.masterAddressOrRefresh(mq);
      const offset = await this.host.run.instance.queryConsumerOffset(
        addr,
        this.host.config.consumerGroup,
        mq,
        OFFSET_API_TIMEOUT_MS,
      );
      this.host.events.brokerAnswered(this.brokerOf(mq), addr, 'QUERY_CONSUMER_OFFSET');
      return offset;
    } catch (err) {
      this.host.events.brokerFailed(this.brokerOf(mq), addr, 'QUERY_CONSUMER_OFFSET', err);
      throw err;
    }
  }

  async updateConsumerOffsetOneway(mq: MessageQueue, offset: number): Promise<void> {
    const addr = this.masterAddress(this.brokerOf(mq));
    if (!addr) return;
    await this.host.run.instance.updateConsumerOffsetOneway(addr, this.host.config.consumerGroup, mq, offset);
    this.host.instr.offsetCommitted(mq, offset, addr);
  }

  /** docs/protocol-facts.md#start-offset: the start offset of a newly assigned queue; negative = skip it this round. */
  async computePullFromWhere(mq: MessageQueue): Promise<number> {
    const last = await this.host.offsetStore.readOffset(mq, 'store');
    if (last >= 0) return last;
    if (last !== -1) return -1;
    const isRetry = isRetryTopic(mq.topic);
    try {
      switch (this.host.config.consumeFromWhere) {
        case 'CONSUME_FROM_FIRST_OFFSET':
          return 0;
        case 'CONSUME_FROM_TIMESTAMP': {
          const addr = await this.masterAddressOrRefresh(mq);
          if (isRetry) return await this.host.run.instance.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS);
          return await this.host.run.instance.searchOffsetByTimestamp(
            addr,
            mq,
            this.consumeTimestampMs,
            ADMIN_OFFSET_TIMEOUT_MS,
          );
        }
        default: {
          if (isRetry) return 0;
          const addr = await this.masterAddressOrRefresh(mq);
          return await this.host.run.instance.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS);
        }
      }
    } catch (err) {
      log('start offset of %o: %s', mq, (err as Error).message);
      const request =
        this.host.config.consumeFromWhere === 'CONSUME_FROM_TIMESTAMP' && !isRetry
          ? 'SEARCH_OFFSET_BY_TIMESTAMP'
          : 'GET_MAX_OFFSET';
      this.host.events.brokerFailed(this.brokerOf(mq), this.masterAddress(this.brokerOf(mq)), request, err);
      return -1;
    }
  }

  /**
   * Locks live on the master only (Java's lock/unlock ask findBrokerAddressInSubscribe(name, MASTER_ID,
   * true)): a slave answers LOCK_BATCH_MQ from its own lock table, so during a failover two consumers
   * could both "own" an ordered queue. Without a master the lock is not granted.
   */
  async lockBatch(brokerName: string, mqs: MessageQueue[]): Promise<MessageQueue[]> {
    const addr = this.host.run.instance.findBrokerMasterAddress(brokerName);
    try {
      if (!addr) throw new BrokerAddressNotFoundError(brokerName);
      const granted = await this.host.run.instance.lockBatchMQ(
        addr,
        this.host.config.consumerGroup,
        mqs,
        LOCK_TIMEOUT_MS,
      );
      this.host.events.brokerAnswered(brokerName, addr, 'LOCK_BATCH_MQ');
      return granted;
    } catch (err) {
      // An orderly queue is not pulled until locked: without this a refused lock was silent.
      this.host.events.brokerFailed(brokerName, addr, 'LOCK_BATCH_MQ', err);
      throw err;
    }
  }

  async unlockBatch(brokerName: string, mqs: MessageQueue[], oneway: boolean): Promise<void> {
    const addr = this.host.run.instance.findBrokerMasterAddress(brokerName);
    if (!addr) return;
    await this.host.run.instance.unlockBatchMQ(addr, this.host.config.consumerGroup, mqs, oneway, LOCK_TIMEOUT_MS);
  }
}
