import type { MessageQueue } from '../../protocol/index.js';

/**
 * Outcome of a stored send. Anything but SEND_OK means the message was stored but the broker could
 * not confirm the flush or the replication in time (FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT,
 * SLAVE_NOT_AVAILABLE answers, docs/protocol-facts.md#send).
 * @category Producing
 */
export type SendStatus = 'SEND_OK' | 'FLUSH_DISK_TIMEOUT' | 'FLUSH_SLAVE_TIMEOUT' | 'SLAVE_NOT_AVAILABLE';

/**
 * What a successful send returns (Java's SendResult): status, message ids, queue and queue offset.
 * @category Producing
 */
export interface SendResult {
  /**
   * The broker's answer: SEND_OK, or the message stored but FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT or
   * SLAVE_NOT_AVAILABLE.
   */
  status: SendStatus;
  /** The client id (UNIQ_KEY) of the message; comma-joined for a batch. */
  msgId: string;
  /** The broker's offset msgId (store host + commit-log offset); comma-joined for a batch. */
  offsetMsgId: string;
  /** The queue the message went to. */
  messageQueue: MessageQueue;
  /** Queue offset of the (first) message. */
  queueOffset: number;
  /** MSG_REGION the broker reported. */
  regionId?: string;
  /** TRACE_ON the broker reported. */
  traceOn?: boolean;
  /** The transactionId the broker answered (the message's UNIQ_KEY; Java's 5.x brokers send it for every send). */
  transactionId?: string;
  /**
   * The handle that withdraws this message before it is delivered (`producer.recallMessage(topic,
   * recallHandle)`): a 5.x broker gives one for a timer message (delayMs / deliverAt) it parked,
   * never for a batch or a message delivered at once.
   */
  recallHandle?: string;
}
