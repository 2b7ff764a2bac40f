import createDebug from '../../debug.js';
import {
  Operations,
  encodeStoredMessage,
  type CheckTransactionStateRequestHeader,
  type MessageExt,
} from '../../../protocol/index.js';
import type { RemotingConnection } from '../../remoting/index.js';
import { BROKER_VERSION } from '../broker-version.js';
import { copiedTo } from '../message-record.js';
import { OnDemandTask } from '../periodic-task.js';
import type { BrokerContext } from '../processor/broker-context.js';
import { callClient } from '../processor/request-processor.js';
import {
  TRANS_CHECK_MAX_TIME_TOPIC,
  TRANS_HALF_TOPIC,
  type TransactionCheckListener,
  type TransactionalMessageService,
} from './transactional-message-service.js';

const log = createDebug('rocketwire:broker:transaction');

/**
 * TransactionalMessageCheckService + DefaultTransactionalMessageCheckListener: every
 * transactionCheckInterval (on the broker's clock) one check round; a half message to check goes
 * to a live producer of its group (PGROUP) as CHECK_TRANSACTION_STATE, oneway, and one checked too
 * often is moved to TRANS_CHECK_MAX_TIME_TOPIC.
 */
export class TransactionalMessageCheckService implements TransactionCheckListener {
  private stop: (() => void) | null = null;
  /** ProducerManager#getAvailableChannel's round-robin position per group. */
  private readonly next = new Map<string, number>();
  /** Checks sent and messages discarded, for tests and stats. */
  readonly counters = { checks: 0, discarded: 0, noChannel: 0 };

  constructor(
    private readonly ctx: BrokerContext & { readonly brokerName: string },
    private readonly service: TransactionalMessageService,
  ) {}

  /**
   * Check rounds run only while a half queue holds messages past its check offset: woken by every
   * message stored in the half topic (a prepare, or a round's own re-put).
   */
  start(): void {
    if (this.stop) return;
    const task = new OnDemandTask(
      this.ctx.clock,
      this.service.settings.transactionCheckInterval,
      () => {
        this.service.check(this);
        return this.service.hasHalvesToCheck();
      },
      (err) => log('transaction check failed: %O', err),
    );
    const stopWaking = this.ctx.messageStore.onArrival((topic) => {
      if (topic === TRANS_HALF_TOPIC) task.wake();
    });
    if (this.service.hasHalvesToCheck()) task.wake();
    this.stop = () => {
      stopWaking();
      task.stop();
    };
  }

  close(): void {
    this.stop?.();
    this.stop = null;
  }

  /** AbstractTransactionalMessageCheckListener#sendCheckMessage. */
  resolveHalfMsg(msg: MessageExt): void {
    const group = msg.properties.PGROUP;
    const conn = group === undefined ? undefined : this.availableChannel(group);
    if (!conn) {
      this.counters.noChannel++;
      log('check of %s skipped: no live producer of group %s', msg.properties.UNIQ_KEY, group);
      return;
    }
    const uniq = msg.properties.UNIQ_KEY;
    const header: CheckTransactionStateRequestHeader = {
      topic: msg.topic,
      commitLogOffset: msg.commitLogOffset,
      offsetMsgId: msg.offsetMsgId,
      tranStateTableOffset: msg.queueOffset,
      bname: this.ctx.brokerName,
    };
    if (uniq !== undefined) {
      header.msgId = uniq;
      header.transactionId = uniq;
    }
    // the body is the message as its producer sent it: real topic and queue (the properties keep
    // REAL_TOPIC / REAL_QID, as Java's do)
    const realQid = Number(msg.properties.REAL_QID ?? '0');
    const body = encodeStoredMessage({
      ...msg,
      topic: msg.properties.REAL_TOPIC ?? msg.topic,
      queueId: Number.isInteger(realQid) ? realQid : 0,
      properties: msg.properties,
    });
    const op = Operations.CHECK_TRANSACTION_STATE;
    this.counters.checks++;
    callClient(conn, op, header, body, { version: BROKER_VERSION, oneway: true }).catch((err: Error) =>
      log('check of %s to %s failed: %s', uniq, conn.remoteAddress, err.message),
    );
  }

  /** DefaultTransactionalMessageCheckListener#resolveDiscardMsg. */
  resolveDiscardMsg(msg: MessageExt): void {
    this.ctx.topics.ensure(TRANS_CHECK_MAX_TIME_TOPIC, 1);
    const res = this.ctx.messageStore.putMessages([copiedTo(msg, TRANS_CHECK_MAX_TIME_TOPIC, 0, msg.properties)]);
    this.counters.discarded++;
    log(
      'half message %s (%s) checked too often: moved to %s: %s',
      msg.properties.UNIQ_KEY,
      msg.properties.REAL_TOPIC,
      TRANS_CHECK_MAX_TIME_TOPIC,
      TRANS_HALF_TOPIC,
      res.status,
    );
  }

  /**
   * ProducerManager#getAvailableChannel: round-robin over the group's heartbeat channels, the
   * first open one (Java also wants it writable, trying up to 3, else the last active one).
   */
  private availableChannel(group: string): RemotingConnection | undefined {
    const channels = this.ctx.consumers.producerGroups.get(group);
    if (!channels || channels.size === 0) return undefined;
    const conns = [...channels.keys()];
    const start = this.next.get(group) ?? 0;
    for (let k = 0; k < conns.length; k++) {
      const conn = conns[(start + k) % conns.length]!;
      if (!conn.closed) {
        this.next.set(group, (start + k + 1) % conns.length);
        return conn;
      }
    }
    return undefined;
  }
}
