/**
 * What the client instance needs from a consumer (MQConsumerInner in Java). lib/consumer implements it;
 * the instance calls it for heartbeats, scheduled offset persistence and broker-initiated requests.
 */

/** SubscriptionData as the heartbeat carries it (§8.1). */
export interface SubscriptionData {
  topic: string;
  /** The expression; "*" means all. */
  subString: string;
  /** Tags of a TAG expression (empty for "*" and SQL92). */
  tagsSet: string[];
  /** Java String.hashCode of each tag. */
  codeSet: number[];
  /** Millisecond timestamp of when the subscription was built. */
  subVersion: number;
  expressionType: 'TAG' | 'SQL92';
  classFilterMode?: boolean;
}

/**
 * A decoded stored message as the instance hands it to consumeMessageDirectly. Structurally the same as
 * protocol's MessageExt (the codec's type may be used wherever this one is expected).
 */
export interface MessageExtLike {
  topic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  sysFlag: number;
  bornTimestamp: number;
  storeTimestamp: number;
  reconsumeTimes: number;
  properties: Record<string, string>;
  body: Buffer;
  msgId: string;
  [field: string]: unknown;
}

export interface ConsumerInner {
  readonly groupName: string;
  readonly messageModel: 'CLUSTERING' | 'BROADCASTING';
  readonly consumeType: 'CONSUME_PASSIVELY';
  readonly consumeFromWhere: string;
  subscriptions(): SubscriptionData[];
  /** Called on NOTIFY_CONSUMER_IDS_CHANGED. */
  doRebalance(): void;
  /** Body of the GET_CONSUMER_RUNNING_INFO answer: a Buffer/string is sent as is, anything else as JSON. */
  runningInfo(): unknown;
  /** CONSUME_MESSAGE_DIRECTLY: the answer body (ConsumeMessageDirectlyResult), sent as JSON. */
  consumeMessageDirectly(msg: MessageExtLike, brokerName: string): Promise<unknown>;
  /** RESET_CONSUMER_CLIENT_OFFSET: offsets keyed by messageQueueKey(). */
  resetOffset(topic: string, offsets: Map<string, number>): Promise<void>;
  /** Driven every persistOffsetIntervalMs by the instance. */
  persistOffsets(): Promise<void>;
}
