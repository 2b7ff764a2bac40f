import createDebug from '../../debug.js';
import {
  MessageSysFlag,
  Operations,
  ResponseCode,
  type EndTransactionRequestHeader,
  type MessageExt,
} from '../../../protocol/index.js';
import type { RemotingServer } from '../../remoting/index.js';
import {
  DLQ_GROUP_TOPIC_PREFIX,
  RETRY_GROUP_TOPIC_PREFIX,
  isNotAllowedSendTopic,
  isSystemTopic,
  PermName,
} from '../../../protocol/internal.js';
import { unparked } from '../message-record.js';
import type { BrokerContext } from '../processor/broker-context.js';
import { fail, ok, registerOperation, type Answer } from '../processor/request-processor.js';
import {
  endImmunityTimeMs,
  resetTransactionValue,
  transactionKey,
  TRANS_HALF_TOPIC,
  type TransactionalMessageService,
} from './transactional-message-service.js';

const log = createDebug('rocketwire:broker:transaction');

/** What END_TRANSACTION did, for tests and stats. */
export interface EndTransactionCounters {
  committed: number;
  rolledBack: number;
  unknown: number;
  refused: number;
  /** Ends of a half message that was already ended: answered, nothing written. */
  repeated: number;
}

/**
 * EndTransactionProcessor: END_TRANSACTION (37), oneway from the producer. Commit writes the half
 * message to REAL_TOPIC / REAL_QID (transaction type commit, prepared offset = the half's
 * commit-log offset, every property kept, as 5.3.3 stores it) and an op record; rollback writes
 * only the op record; "not a transaction" (UNKNOW) changes nothing and the check loop asks later.
 * The answers (nothing is sent for a oneway request) are Java's: SYSTEM_ERROR when the half message
 * is not found or its producer group, queue offset or commit-log offset differ, ILLEGAL_OPERATION
 * for a producer's own end after its CHECK_IMMUNITY_TIME_IN_SECONDS.
 */
export class EndTransactionProcessor {
  readonly counters: EndTransactionCounters = { committed: 0, rolledBack: 0, unknown: 0, refused: 0, repeated: 0 };

  constructor(
    private readonly ctx: BrokerContext,
    private readonly service: TransactionalMessageService,
  ) {}

  register(server: RemotingServer): void {
    registerOperation(server, Operations.END_TRANSACTION, ({ header, conn }) => {
      const res = this.endTransaction(header);
      // An answer without a code is SUCCESS (ok() and the serve path's default).
      if (res && (res.code ?? ResponseCode.SUCCESS) !== ResponseCode.SUCCESS) {
        this.counters.refused++;
        log('END_TRANSACTION %s from %s: %d %s', header.msgId, conn.remoteAddress, res.code, res.remark);
      }
      return res;
    });
  }

  private endTransaction(h: EndTransactionRequestHeader): Answer | null {
    const type = h.commitOrRollback;
    if (type === MessageSysFlag.TRANSACTION_NOT_TYPE) {
      this.counters.unknown++;
      return null;
    }
    // EndTransactionRequestHeader#checkFields
    if (type !== MessageSysFlag.TRANSACTION_COMMIT_TYPE && type !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) {
      return fail(
        ResponseCode.SYSTEM_ERROR,
        'org.apache.rocketmq.remoting.exception.RemotingCommandException: commitOrRollback field wrong',
      );
    }
    const found = this.service.halfMessageByOffset(h.commitLogOffset);
    if (!found.ok) return fail(ResponseCode.SYSTEM_ERROR, found.remark);
    const half = found.msg;
    // not in Java (5.3.3 commits whatever record the offset names): only a half message, and only
    // to a topic a producer may send to
    const notHalf = this.checkHalfMessage(half);
    if (notHalf) return fail(ResponseCode.SYSTEM_ERROR, notHalf);
    if (this.rejectCommitOrRollback(h, half)) {
      return fail(
        ResponseCode.ILLEGAL_OPERATION,
        'commit or rollback after CHECK_IMMUNITY_TIME_IN_SECONDS: waiting for the check',
      );
    }
    const wrong = checkPrepareMessage(half, h);
    if (wrong) return fail(ResponseCode.SYSTEM_ERROR, wrong);
    const how = type === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE ? 'rollback' : 'commit';
    // a second end writes nothing (Java writes the message again for every commit): the same end
    // again, or one only known from its op record, is SUCCESS; the other one is refused
    const endedHalves = this.service.endedHalves;
    const ended = endedHalves.get(half.queueId, half.queueOffset);
    if (ended !== undefined) {
      this.counters.repeated++;
      if (ended === how || ended === 'ended') return ok();
      return fail(
        ResponseCode.SYSTEM_ERROR,
        `the half message at queue offset ${half.queueOffset} was already ${ended === 'commit' ? 'committed' : 'rolled back'}: commitOrRollback ignored`,
      );
    }
    // another copy of the same transaction (the half and the check's re-put of it) was ended: this
    // copy gets its op record, so the check loop stops asking about it, and nothing else
    const txKey = transactionKey(half);
    const txEnded = endedHalves.getTransaction(txKey);
    if (txEnded !== undefined) {
      this.counters.repeated++;
      this.service.deletePrepareMessage(half, txEnded);
      if (txEnded === how || txEnded === 'ended') return ok();
      return fail(
        ResponseCode.SYSTEM_ERROR,
        `transaction ${half.properties.__transactionId__ ?? half.properties.UNIQ_KEY} was already ${txEnded === 'commit' ? 'committed' : 'rolled back'}: commitOrRollback ignored`,
      );
    }
    if (how === 'rollback') {
      this.service.deletePrepareMessage(half, 'rollback');
      this.counters.rolledBack++;
      return ok();
    }
    // Apache 5.3.3 means to drop REAL_TOPIC, REAL_QID and TRAN_MSG, but clears them from the map
    // after it wrote the properties string the store uses: the committed record keeps all three
    // (seen on the real broker, test/interop/real-broker-transaction.test.ts), and so does this one.
    const inner = unparked(
      half,
      { ...half.properties },
      {
        sysFlag: resetTransactionValue(half.sysFlag, MessageSysFlag.TRANSACTION_COMMIT_TYPE),
        preparedTransactionOffset: h.commitLogOffset,
      },
    );
    if (!inner) return fail(ResponseCode.SYSTEM_ERROR, 'the prepared message has no REAL_TOPIC');
    const result = this.ctx.messageStore.putMessages([inner]);
    switch (result.status) {
      case 'PUT_OK':
        this.ctx.messageStore.stats.incTopicPutNums(inner.topic);
        this.service.deletePrepareMessage(half, 'commit');
        this.counters.committed++;
        return ok();
      case 'MESSAGE_ILLEGAL':
      case 'PROPERTIES_SIZE_EXCEEDED':
        return fail(ResponseCode.MESSAGE_ILLEGAL, result.remark ?? result.status);
      default:
        return fail(ResponseCode.SERVICE_NOT_AVAILABLE, 'Service not available now.');
    }
  }

  /**
   * The remark refusing a record that is not a half message, or one whose REAL_TOPIC / REAL_QID a
   * producer could not send to; null when it is fine. A normal message carrying PGROUP, REAL_TOPIC
   * and REAL_QID would otherwise be copied into a read-only topic, an op topic (ending other
   * producers' halves) or a %DLQ% topic.
   */
  private checkHalfMessage(half: MessageExt): string | null {
    if (half.topic !== TRANS_HALF_TOPIC)
      return `the record at commitLogOffset ${half.commitLogOffset} is not a half message: its topic is not ${TRANS_HALF_TOPIC}`;
    if ((half.sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK) !== MessageSysFlag.TRANSACTION_NOT_TYPE) {
      return `the record at commitLogOffset ${half.commitLogOffset} is not a half message: its sysFlag is not that of a stored prepared message`;
    }
    const topic = half.properties.REAL_TOPIC;
    if (topic === undefined || topic.length === 0) return 'the half message has no REAL_TOPIC';
    if (
      isSystemTopic(topic) ||
      isNotAllowedSendTopic(topic) ||
      topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ||
      topic.startsWith(DLQ_GROUP_TOPIC_PREFIX)
    ) {
      return `REAL_TOPIC ${topic} is a system, retry or dead-letter topic: a transaction cannot commit to it`;
    }
    const config = this.ctx.topics.get(topic);
    if (!config) return `REAL_TOPIC ${topic} does not exist`;
    if ((config.perm & PermName.PERM_WRITE) === 0) return `REAL_TOPIC ${topic} is not writable (perm ${config.perm})`;
    const qidText = half.properties.REAL_QID ?? '';
    const qid = /^\d+$/.test(qidText) ? Number(qidText) : -1;
    if (!(qid >= 0 && qid < Math.max(config.readQueueNums, config.writeQueueNums)))
      return `REAL_QID ${JSON.stringify(qidText)} is not a queue of ${topic}`;
    return null;
  }

  /** A producer's own commit / rollback after the message's custom immunity time waits for the check. */
  private rejectCommitOrRollback(h: EndTransactionRequestHeader, half: MessageExt): boolean {
    if (h.fromTransactionCheck === true) return false;
    const text = half.properties.CHECK_IMMUNITY_TIME_IN_SECONDS;
    if (text === undefined || text.length === 0) return false;
    return (
      this.ctx.clock.now() - half.bornTimestamp > endImmunityTimeMs(text, this.service.settings.transactionTimeOut)
    );
  }
}

/** EndTransactionProcessor#checkPrepareMessage: the remark of a mismatch, or null. */
function checkPrepareMessage(half: MessageExt, h: EndTransactionRequestHeader): string | null {
  if (half.properties.PGROUP !== h.producerGroup) return 'The producer group wrong';
  if (half.queueOffset !== h.tranStateTableOffset) return 'The transaction state table offset wrong';
  if (half.commitLogOffset !== h.commitLogOffset) return 'The commit log offset wrong';
  return null;
}
