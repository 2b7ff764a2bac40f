import type { MessageExt } from '../../protocol/index.js';
import {
  TransactionProducer,
  type LocalTransactionState,
  type Message,
  type ProducerOptions,
  type TransactionSendResult,
} from '../producer/index.js';
import { UsageError } from './common.js';

/** `rocketwire produce --transaction MODE`. */
export type TransactionMode = 'commit' | 'rollback' | 'check';

const MODES: readonly TransactionMode[] = ['commit', 'rollback', 'check'];

/** The --transaction value, or undefined when absent; UsageError naming the option otherwise. */
export function transactionMode(value: string | undefined): TransactionMode | undefined {
  if (value === undefined) return undefined;
  if (!(MODES as readonly string[]).includes(value))
    throw new UsageError(`--transaction must be commit, rollback or check, got "${value}"`);
  return value as TransactionMode;
}

/**
 * The answer to the broker's check of a message: in check mode commit for an even `seq` property
 * and rollback for an odd one (UNKNOW without a readable seq, so a stranger's message of the group
 * is left alone); in commit and rollback mode what the run decided anyway (a check can come when
 * the end was lost).
 */
export function checkAnswer(mode: TransactionMode, msg: MessageExt): LocalTransactionState {
  if (mode === 'commit') return 'COMMIT_MESSAGE';
  if (mode === 'rollback') return 'ROLLBACK_MESSAGE';
  const seq = msg.properties.seq;
  if (seq === undefined || !/^\d+$/.test(seq)) return 'UNKNOW';
  return Number(seq) % 2 === 0 ? 'COMMIT_MESSAGE' : 'ROLLBACK_MESSAGE';
}

export interface CheckOutcome {
  /** Messages of this run the broker asked about and that were answered. */
  checked: number;
  committed: number;
  rolledBack: number;
  /** Messages of this run still waiting for their check. */
  unchecked: number;
}

/**
 * One `produce --transaction` run: a TransactionProducer whose local transaction answers the mode
 * (check: UNKNOW, so that every message is checked) and whose checker answers checkAnswer. Message
 * i carries property `seq` = i.
 */
export class TransactionRun {
  readonly producer: TransactionProducer;
  /** msgIds of this run's messages not checked yet (check mode). */
  private readonly waiting = new Set<string>();
  private readonly outcome = { checked: 0, committed: 0, rolledBack: 0 };
  private wake: (() => void) | null = null;

  constructor(
    readonly mode: TransactionMode,
    options: ProducerOptions,
  ) {
    const local: LocalTransactionState =
      mode === 'commit' ? 'COMMIT_MESSAGE' : mode === 'rollback' ? 'ROLLBACK_MESSAGE' : 'UNKNOW';
    this.producer = new TransactionProducer({
      ...options,
      transactionListener: {
        executeLocalTransaction: (_msg, _arg, r) => {
          if (mode === 'check') this.waiting.add(r.msgId);
          return local;
        },
        checkLocalTransaction: (msg) => {
          const state = checkAnswer(mode, msg);
          if (this.waiting.delete(msg.msgId)) {
            this.outcome.checked++;
            if (state === 'COMMIT_MESSAGE') this.outcome.committed++;
            if (state === 'ROLLBACK_MESSAGE') this.outcome.rolledBack++;
            if (this.waiting.size === 0) this.wake?.();
          }
          return state;
        },
      },
    });
  }

  /** Send message `seq` of the run in a transaction. */
  send(template: Message, seq: number): Promise<TransactionSendResult> {
    return this.producer.sendMessageInTransaction({
      ...template,
      properties: { ...template.properties, seq: String(seq) },
    });
  }

  /**
   * Check mode: resolves once every message of the run was checked and its END_TRANSACTION sent,
   * or when `timeoutMs` passed, or `signal` aborts. Other modes resolve at once.
   */
  async waitForChecks(timeoutMs: number, signal?: AbortSignal): Promise<CheckOutcome> {
    if (this.mode === 'check' && this.waiting.size > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        // the command's own process: a ref'd timer keeps it alive while it waits for the broker
        const timer = setTimeout(done, timeoutMs);
        signal?.addEventListener('abort', done, { once: true });
        this.wake = done;
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
      });
      this.wake = null;
      // the checker has answered; let the producer write the last END_TRANSACTIONs
      const answered = (): number => Object.values(this.producer.transactionStats().checked).reduce((a, b) => a + b, 0);
      const deadline = Date.now() + 2000;
      while (answered() < this.outcome.checked && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    }
    return { ...this.outcome, unchecked: this.waiting.size };
  }
}
