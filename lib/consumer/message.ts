/**
 * The consumer's view of a decoded stored message. Structurally a subset of protocol's MessageExt
 * (and of lib/client's MessageExtLike), so messages from either decoder can be consumed.
 */
export interface MessageExt {
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
  flag?: number;
  storeHost?: string;
  bornHost?: string;
  offsetMsgId?: string;
  tags?: string | undefined;
  /** Set by the consumer: the broker name of the queue the message was pulled from. */
  brokerName?: string | undefined;
  keys?: string | undefined;
}
