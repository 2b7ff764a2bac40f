/**
 * What the client instance needs from a consumer (MQConsumerInner in Java). lib/consumer implements it;
 * the instance calls it for heartbeats, scheduled offset persistence and broker-initiated requests.
 */
import type { ConsumeMessageDirectlyResult, MessageExt, MessageQueue, SubscriptionData } from '../../protocol/index.js';

/** A decoded stored message (protocol's MessageExt); the name lib/consumer codes against. */
export type MessageExtLike = MessageExt;

export interface ConsumerInner {
  readonly groupName: string;
  readonly messageModel: 'CLUSTERING' | 'BROADCASTING';
  /** CONSUME_PASSIVELY: push consumer; CONSUME_ACTIVELY: lite pull consumer. */
  readonly consumeType: 'CONSUME_PASSIVELY' | 'CONSUME_ACTIVELY';
  readonly consumeFromWhere: string;
  /** Subscriptions as the heartbeat carries them (docs/protocol-facts.md#heartbeat-data), retry topic included. */
  subscriptions(): SubscriptionData[];
  /**
   * Rebalance: on NOTIFY_CONSUMER_IDS_CHANGED `spaced` (the round waits until 1 s after the previous
   * one ended, as Java's RebalanceService), on a new broker connection at once.
   */
  doRebalance(spaced?: boolean): void;
  /** Body of the GET_CONSUMER_RUNNING_INFO answer, encoded by protocol's ConsumerRunningInfo codec. */
  runningInfo(): Buffer;
  /** CONSUME_MESSAGE_DIRECTLY: the result, which the instance encodes with the row's body codec. */
  consumeMessageDirectly(msg: MessageExt, brokerName: string): Promise<ConsumeMessageDirectlyResult>;
  /** RESET_CONSUMER_CLIENT_OFFSET: offsets keyed by protocol's queueKey(). */
  resetOffset(topic: string, offsets: Map<string, number>): Promise<void>;
  /** GET_CONSUMER_STATUS_FROM_CLIENT: the consumer's in-memory offset of each queue of `topic`. */
  consumerStatus(topic: string): [MessageQueue, number][];
  /** Driven every persistOffsetIntervalMs by the instance. */
  persistOffsets(): Promise<void>;
}
