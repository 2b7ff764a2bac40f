import createDebug from '../debug.js';
import {
  decodeOffsetMsgId,
  MessageSysFlag,
  Operations,
  type CheckTransactionStateRequestHeader,
  type EndTransactionRequestHeader,
  type MessageExt,
} from '../../protocol/index.js';
import { javaHashMapOrder } from '../../protocol/java-hash.js';
import { systemClock, type Clock, type ClockTimer } from '../clock.js';
import { brokerNameOf } from '../client/static-topic.js';
import type { Message } from './message.js';
import { messageProperties } from './message-encoding.js';
import { Producer, type SendOptions } from './producer.js';
import { producerOptionCheck, type ProducerOptions } from './producer-options.js';
import type { SendResult } from './send-result.js';
import { withoutNamespace, type NamespaceOption } from '../client/index.js';

const log = createDebug('rocketwire:producer');

/**
 * Java's LocalTransactionState: what the local transaction (or the checker) says about a half message.
 * @category Producing
 */
export const LocalTransactionState = {
  COMMIT_MESSAGE: 'COMMIT_MESSAGE',
  ROLLBACK_MESSAGE: 'ROLLBACK_MESSAGE',
  /** Java's spelling (sic): not known yet, the broker asks again. */
  UNKNOW: 'UNKNOW',
} as const;
/** @category Producing */
export type LocalTransactionState = (typeof LocalTransactionState)[keyof typeof LocalTransactionState];

/**
 * What a listener may return. TypeScript widens a lone string literal returned from an async
 * function whose contextual return type mixes promise and non-promise members, so a strict
 * `LocalTransactionState | Promise<LocalTransactionState>` refused `async () => 'UNKNOW'` (TS2322).
 * The promise side therefore takes any string; the value is checked at run time, and anything but
 * COMMIT_MESSAGE or ROLLBACK_MESSAGE answers UNKNOW.
 * @category Producing
 */
export type LocalTransactionResult = LocalTransactionState | PromiseLike<LocalTransactionState | (string & {})>;

/**
 * Java's TransactionListener.
 * @category Producing
 */
export interface TransactionListener {
  /**
   * Runs the local transaction after the half message was stored (SEND_OK only). COMMIT_MESSAGE
   * makes it visible, ROLLBACK_MESSAGE drops it, UNKNOW (or a throw) leaves it to the broker's
   * check-back. `sendResult` is the half message's send result.
   */
  executeLocalTransaction(msg: Message, arg: unknown, sendResult: SendResult): LocalTransactionResult;
  /**
   * Answers the broker's CHECK_TRANSACTION_STATE for a half message whose end was UNKNOW or lost;
   * `msg` is the message as sent (real topic and queue, `msgId` its UNIQ_KEY). A throw, or no
   * answer within `checkTimeoutMs`, answers UNKNOW: the broker asks again next round.
   */
  checkLocalTransaction(msg: MessageExt): LocalTransactionResult;
}

/**
 * Options of a TransactionProducer: a Producer's, plus the transaction listener and the limits of
 * the broker's check-backs.
 * @category Producing
 */
export interface TransactionProducerOptions extends ProducerOptions, NamespaceOption {
  /**
   * Runs the local transaction of each sendMessageInTransaction() and answers the broker's
   * check-backs (required).
   */
  transactionListener: TransactionListener;
  /**
   * A check-back the listener has not answered within this many milliseconds is answered UNKNOW.
   * @default 10000
   */
  checkTimeoutMs?: number;
  /**
   * Check-backs answered at once, 1..1000 (Java runs them on one thread: checkThreadPoolMinSize/MaxSize 1).
   * @default 1
   */
  checkConcurrency?: number;
  /**
   * Check-backs waiting for a slot; further ones are dropped and asked again by the broker (Java's
   * checkRequestHoldMax).
   * @default 2000
   */
  checkRequestHoldMax?: number;
}

/**
 * Java's TransactionSendResult: the half message's send result and what the local transaction said.
 * @category Producing
 */
export interface TransactionSendResult extends SendResult {
  /** What the local transaction answered (UNKNOW when it threw or hung: the broker asks again later). */
  localTransactionState: LocalTransactionState;
}

/**
 * What `transactionProducer.transactionStats()` returns: transactions ended and check-backs answered, by state.
 * @category Producing
 */
export interface TransactionStats {
  /** END_TRANSACTION sent after sendMessageInTransaction, by state. */
  ended: Record<LocalTransactionState, number>;
  /** Check-backs answered, by state (a throw or a timeout counts as UNKNOW). */
  checked: Record<LocalTransactionState, number>;
  /** Check-backs whose listener threw or did not answer in time. */
  checkFailures: number;
  /** Check-backs dropped because checkRequestHoldMax were waiting. */
  checksDropped: number;
  /**
   * Check-backs not run because a check of the same half message (same transactionId, else
   * UNIQ_KEY, else commit-log offset) was already waiting or running: a waiting one takes the
   * newer request's fields, a running one's answer covers it.
   */
  checksCoalesced: number;
}

const STATE_FLAG: Record<LocalTransactionState, number> = {
  COMMIT_MESSAGE: MessageSysFlag.TRANSACTION_COMMIT_TYPE,
  ROLLBACK_MESSAGE: MessageSysFlag.TRANSACTION_ROLLBACK_TYPE,
  UNKNOW: MessageSysFlag.TRANSACTION_NOT_TYPE,
};

/** A returned value that is not a state is UNKNOW, as Java takes a null. */
function asState(v: unknown): LocalTransactionState {
  return v === 'COMMIT_MESSAGE' || v === 'ROLLBACK_MESSAGE' ? v : 'UNKNOW';
}

/** Java's UtilAll.exceptionSimpleDesc, roughly: the error's name and first line. */
function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.split('\n')[0]}`;
  return String(err);
}

interface PendingCheck {
  brokerAddr: string;
  msg: MessageExt;
  header: CheckTransactionStateRequestHeader;
  /** In the queue, not yet handed to the listener. */
  waiting?: boolean;
  /** Its checkKey when it was taken on (the entry of checksByKey it owns). */
  key?: string;
}

/**
 * Which half message a check is about: its transactionId (the broker's check header, the
 * producer's UNIQ_KEY of the half), else the message's UNIQ_KEY, else its commit-log offset on
 * that broker. A broker's check round re-stores the half under a new commit-log offset, so the
 * offset is the last resort.
 */
function checkKey(c: PendingCheck): string {
  const id = c.header.transactionId ?? c.msg.properties.UNIQ_KEY;
  return id !== undefined && id !== '' ? `id:${id}` : `at:${c.brokerAddr}@${c.header.commitLogOffset}`;
}

/**
 * TransactionMQProducer: `sendMessageInTransaction` sends a half message (property TRAN_MSG=true,
 * PGROUP, sysFlag TRANSACTION_PREPARED; a delay level is ignored, as Java ignores it), runs the
 * local transaction and ends it with END_TRANSACTION (oneway) commit, rollback or "not a
 * transaction" (UNKNOW); the broker's CHECK_TRANSACTION_STATE is answered with the listener's
 * `checkLocalTransaction`, to the broker that asked.
 * @category Producing
 */
export class TransactionProducer extends Producer {
  private readonly listener: TransactionListener;
  private readonly checkTimeoutMs: number;
  private readonly checkConcurrency: number;
  private readonly checkRequestHoldMax: number;
  private readonly txClock: Clock;
  private readonly queue: PendingCheck[] = [];
  private active = 0;
  private accepting = false;
  private readonly heartbeated = new Set<string>();
  private readonly txCounters: TransactionStats = {
    ended: { COMMIT_MESSAGE: 0, ROLLBACK_MESSAGE: 0, UNKNOW: 0 },
    checked: { COMMIT_MESSAGE: 0, ROLLBACK_MESSAGE: 0, UNKNOW: 0 },
    checkFailures: 0,
    checksDropped: 0,
    checksCoalesced: 0,
  };
  /** The checks waiting or running, by half message (checkKey): at most one of each at a time. */
  private readonly checksByKey = new Map<string, PendingCheck>();

  constructor(options: TransactionProducerOptions) {
    const { transactionListener, checkTimeoutMs, checkConcurrency, checkRequestHoldMax, ...producerOptions } = options;
    super(producerOptions);
    const l = transactionListener as Partial<TransactionListener> | undefined;
    if (
      typeof l !== 'object' ||
      l === null ||
      typeof l.executeLocalTransaction !== 'function' ||
      typeof l.checkLocalTransaction !== 'function'
    ) {
      throw producerOptionCheck.error(
        'transactionListener',
        'must be an object with executeLocalTransaction and checkLocalTransaction functions',
      );
    }
    this.listener = transactionListener;
    this.checkTimeoutMs = producerOptionCheck.intIn('checkTimeoutMs', checkTimeoutMs ?? 10_000, 1, 3_600_000);
    this.checkConcurrency = producerOptionCheck.intIn('checkConcurrency', checkConcurrency ?? 1, 1, 1000);
    this.checkRequestHoldMax = producerOptionCheck.intIn(
      'checkRequestHoldMax',
      checkRequestHoldMax ?? 2000,
      1,
      1_000_000,
    );
    this.txClock = this.options.client.clock ?? systemClock;
  }

  /** Starts the producer (as Producer.start()) and begins answering the broker's transaction check-backs. */
  override async start(): Promise<void> {
    await super.start();
    this.accepting = true;
    this.clientInstance.transactionCheckers.set(this.options.group, (brokerAddr, msg, header) =>
      this.onCheck({ brokerAddr, msg, header }),
    );
  }

  override async shutdown(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.accepting) {
      this.accepting = false;
      this.queue.length = 0;
      this.checksByKey.clear();
      this.clientInstance.transactionCheckers.delete(this.options.group);
    }
    return super.shutdown(options);
  }

  /** Transactions ended and check-backs answered since start, by state. */
  transactionStats(): TransactionStats {
    const c = this.txCounters;
    return {
      ended: { ...c.ended },
      checked: { ...c.checked },
      checkFailures: c.checkFailures,
      checksDropped: c.checksDropped,
      checksCoalesced: c.checksCoalesced,
    };
  }

  /**
   * DefaultMQProducerImpl#sendMessageInTransaction: send the half message synchronously (a failed
   * send throws, and nothing else happens), run the local transaction on SEND_OK (a stored but
   * unflushed or unreplicated half message is rolled back, as Java does), then END_TRANSACTION.
   * A failure to send the END_TRANSACTION is logged, not thrown: the check-back resolves it.
   */
  async sendMessageInTransaction(msg: Message, arg?: unknown, opts: SendOptions = {}): Promise<TransactionSendResult> {
    const { delayTimeLevel: _ignored, ...rest } = msg;
    const group = this.options.group;
    const sendResult = await this.sendHalfMessage(rest, (m, uniq) => halfMessageProperties(m, uniq, group), opts);
    await this.heartbeatOnce(sendResult.messageQueue.brokerName);
    let state: LocalTransactionState = 'UNKNOW';
    let remark: string | null = null;
    if (sendResult.status === 'SEND_OK') {
      try {
        state = asState(await this.listener.executeLocalTransaction(rest, arg, sendResult));
      } catch (err) {
        log('executeLocalTransaction of %s threw: %s', sendResult.msgId, describe(err));
        remark = `executeLocalTransactionBranch exception: ${describe(err)}`;
      }
    } else {
      state = 'ROLLBACK_MESSAGE';
    }
    await this.endTransaction(rest, sendResult, state, remark);
    return { ...sendResult, localTransactionState: state };
  }

  /**
   * A broker asks a producer of the group through the channel its heartbeat registered; the
   * first heartbeat of a producer can come before it knew any broker, and the next one 30 s later,
   * so a half message to a broker not heartbeated yet is followed by a heartbeat at once (Java
   * waits for the periodic one, and a check-back meanwhile finds no channel).
   */
  private async heartbeatOnce(brokerName: string): Promise<void> {
    if (this.heartbeated.has(brokerName)) return;
    this.heartbeated.add(brokerName);
    await this.clientInstance.sendHeartbeatToAllBrokers();
  }

  /** DefaultMQProducerImpl#endTransaction. */
  private async endTransaction(
    msg: Message,
    r: SendResult,
    state: LocalTransactionState,
    remark: string | null,
  ): Promise<void> {
    const instance = this.clientInstance;
    // A static topic's half message went to the broker leading its logic queue (Java's
    // getBrokerNameFromMessageQueue(sendResult.getMessageQueue())).
    const brokerName = brokerNameOf(instance, r.messageQueue);
    const addr = instance.findBrokerMasterAddress(brokerName);
    this.txCounters.ended[state]++;
    let commitLogOffset: number;
    try {
      commitLogOffset = decodeOffsetMsgId(r.offsetMsgId).commitLogOffset;
    } catch {
      commitLogOffset = -1;
    }
    if (!addr || commitLogOffset < 0) {
      log(
        'END_TRANSACTION of %s: no master address of %s or no offset in %s; the check-back will resolve it',
        r.msgId,
        brokerName,
        r.offsetMsgId,
      );
      return;
    }
    const header: EndTransactionRequestHeader = {
      topic: msg.topic,
      producerGroup: this.options.group,
      tranStateTableOffset: r.queueOffset,
      commitLogOffset,
      commitOrRollback: STATE_FLAG[state],
      fromTransactionCheck: false,
      msgId: r.msgId,
      bname: brokerName,
    };
    if (r.transactionId !== undefined) header.transactionId = r.transactionId;
    await this.sendEnd(addr, header, remark);
    const props: Record<string, string> = {};
    if (msg.tags !== undefined) props.TAGS = msg.tags;
    if (msg.keys !== undefined) props.KEYS = Array.isArray(msg.keys) ? msg.keys.join(' ') : String(msg.keys);
    this.traceEndTransaction({
      topic: msg.topic,
      properties: props,
      brokerAddr: addr,
      msgId: r.msgId,
      transactionId: r.transactionId ?? null,
      transactionState: state,
      fromTransactionCheck: false,
    });
  }

  private async sendEnd(addr: string, header: EndTransactionRequestHeader, remark: string | null): Promise<void> {
    const instance = this.clientInstance;
    try {
      await instance.invokeOneway(addr, Operations.END_TRANSACTION, header, undefined, { remark });
    } catch (err) {
      log('END_TRANSACTION of %s to %s failed: %s', header.msgId, addr, (err as Error).message);
    }
  }

  // ---------------------------------------------------------------- check-backs

  /**
   * A broker's check-back. A half message is checked at most once at a time: a broker that repeats
   * the check of one half (a check round per minute, or a flood) while it waits or runs is folded
   * into it (checksCoalesced), so the listener is never called twice at once for one transaction
   * and the queue holds one entry per half. Java's producer queues every request
   * (checkRequestHoldMax 2000) and calls the listener once per request, duplicates included.
   */
  private onCheck(check: PendingCheck): void {
    if (!this.accepting) return;
    const key = checkKey(check);
    check.key = key;
    const same = this.checksByKey.get(key);
    if (same !== undefined) {
      this.txCounters.checksCoalesced++;
      // Still waiting: answer the newest request (its offsets and broker), not the older one.
      if (same.waiting) {
        same.brokerAddr = check.brokerAddr;
        same.msg = check.msg;
        same.header = check.header;
      }
      log('check of %s coalesced with the one %s', check.msg.msgId, same.waiting ? 'waiting' : 'running');
      return;
    }
    if (this.active >= this.checkConcurrency) {
      if (this.queue.length >= this.checkRequestHoldMax) {
        this.txCounters.checksDropped++;
        log('check of %s dropped: %d checks waiting (checkRequestHoldMax)', check.msg.msgId, this.queue.length);
        return;
      }
      check.waiting = true;
      this.checksByKey.set(key, check);
      this.queue.push(check);
      return;
    }
    this.checksByKey.set(key, check);
    this.runCheck(check);
  }

  private runCheck(check: PendingCheck): void {
    this.active++;
    check.waiting = false;
    // The catch takes every failure of the check; finally only counts it out.
    void this.answerCheck(check)
      .catch((err: unknown) => log('check of %s failed: %s', check.msg.msgId, describe(err)))
      .finally(() => {
        this.active--;
        if (check.key !== undefined && this.checksByKey.get(check.key) === check) this.checksByKey.delete(check.key);
        const next = this.accepting ? this.queue.shift() : undefined;
        if (next) this.runCheck(next);
      });
  }

  /** DefaultMQProducerImpl#checkTransactionState: ask the listener, bounded by checkTimeoutMs; answer the broker that asked. */
  private async answerCheck({ brokerAddr, msg, header }: PendingCheck): Promise<void> {
    let state: LocalTransactionState = 'UNKNOW';
    let remark: string | null = null;
    let timer: ClockTimer | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = this.txClock.setTimeout(
          () => reject(new Error(`checkLocalTransaction did not answer within ${this.checkTimeoutMs} ms`)),
          this.checkTimeoutMs,
        );
      });
      state = asState(
        await Promise.race([
          Promise.resolve().then(() =>
            this.listener.checkLocalTransaction(checkedWithoutNamespace(this.namespace, msg)),
          ),
          timeout,
        ]),
      );
    } catch (err) {
      this.txCounters.checkFailures++;
      log('checkLocalTransaction of %s: %s', msg.msgId, describe(err));
      remark = `checkLocalTransactionState Exception: ${describe(err)}`;
    } finally {
      if (timer) this.txClock.clearTimeout(timer);
    }
    if (!this.accepting) {
      this.txCounters.checked[state]++;
      return;
    }
    const end: EndTransactionRequestHeader = {
      producerGroup: this.options.group,
      tranStateTableOffset: header.tranStateTableOffset,
      commitLogOffset: header.commitLogOffset,
      commitOrRollback: STATE_FLAG[state],
      fromTransactionCheck: true,
      msgId: msg.properties.UNIQ_KEY ?? msg.msgId,
    };
    if (header.topic !== undefined) end.topic = header.topic;
    if (header.transactionId !== undefined) end.transactionId = header.transactionId;
    if (header.bname !== undefined) end.bname = header.bname;
    await this.sendEnd(brokerAddr, end, remark);
    this.traceEndTransaction({
      topic: msg.topic,
      properties: msg.properties,
      brokerAddr,
      msgId: end.msgId ?? msg.msgId,
      transactionId: header.transactionId ?? null,
      transactionState: state,
      fromTransactionCheck: true,
    });
    // counted once the answer is on its way: a command may exit when every check is counted
    this.txCounters.checked[state]++;
  }
}

/**
 * The properties of a half message: the message's own, TRAN_MSG=true and PGROUP (put by
 * sendMessageInTransaction before the producer adds UNIQ_KEY), in Java's HashMap order.
 */
export function halfMessageProperties(msg: Message, uniqKey: string, group: string): string {
  const props = messageProperties(msg, undefined);
  props.TRAN_MSG = 'true';
  props.PGROUP = group;
  props.UNIQ_KEY = uniqKey;
  let s = '';
  for (const k of javaHashMapOrder(Object.keys(props)))
    s += (s.length === 0 ? '' : '\u0002') + k + '\u0001' + props[k]!;
  return s;
}

/**
 * ClientRemotingProcessor#checkTransactionState: the listener sees the half message's topic
 * without the producer's namespace, as the application named it when it sent it.
 */
function checkedWithoutNamespace(namespace: string | undefined, msg: MessageExt): MessageExt {
  if (!namespace) return msg;
  const topic = withoutNamespace(namespace, msg.topic);
  return topic === msg.topic ? msg : { ...msg, topic };
}
