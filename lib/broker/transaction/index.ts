import type { RemotingServer } from '../../remoting/index.js';
import { brokerOptionCheck } from '../option-check.js';
import type { BrokerContext } from '../processor/broker-context.js';
import { EndTransactionProcessor } from './end-transaction-processor.js';
import { TransactionalMessageCheckService } from './transactional-message-check-service.js';
import {
  DEFAULT_TRANSACTION_SETTINGS,
  TransactionalMessageService,
  type TransactionSettings,
} from './transactional-message-service.js';

export * from './transactional-message-service.js';
export { EndTransactionProcessor } from './end-transaction-processor.js';
export { TransactionalMessageCheckService } from './transactional-message-check-service.js';

/** The transaction settings of a broker (BrokerConfig's names and units). */
export interface TransactionTuning {
  /**
   * Milliseconds between two check rounds (Java's transactionCheckInterval, 30 000 since 5.1.1).
   * @default 30000
   */
  transactionCheckInterval?: number;
  /**
   * Age in milliseconds a half message must reach before it is checked (Java's transactionTimeOut).
   * @default 6000
   */
  transactionTimeOut?: number;
  /**
   * Checks of one half message before it is discarded to TRANS_CHECK_MAX_TIME_TOPIC (Java's transactionCheckMax).
   * @default 15
   */
  transactionCheckMax?: number;
  /**
   * Refuse half messages with NO_PERMISSION (Java's rejectTransactionMessage).
   * @default false
   */
  rejectTransactionMessage?: boolean;
  /**
   * Ended half messages remembered, so that a repeated END_TRANSACTION (three commits, or a
   * rollback then a commit) writes nothing; the newest are kept, and read back from the op queue at
   * start. Not in Java.
   * @default 100000
   */
  maxEndedHalves?: number;
}

/** The broker's transaction parts, wired by Broker. */
export interface Transactions {
  readonly service: TransactionalMessageService;
  readonly check: TransactionalMessageCheckService;
  readonly end: EndTransactionProcessor;
  register(server: RemotingServer): void;
  start(): void;
  close(): void;
}

function intSetting(
  name: keyof TransactionTuning,
  v: number | undefined,
  dflt: number,
  min: number,
  max: number,
): number {
  return brokerOptionCheck.intIn(name, v ?? dflt, min, max);
}

/** The settings of `tuning`, defaults filled in; BrokerOptionError naming a value out of range. */
export function resolveTransactionSettings(tuning: TransactionTuning): TransactionSettings {
  const d = DEFAULT_TRANSACTION_SETTINGS;
  if (tuning.rejectTransactionMessage !== undefined)
    brokerOptionCheck.boolean('rejectTransactionMessage', tuning.rejectTransactionMessage);
  return {
    transactionCheckInterval: intSetting(
      'transactionCheckInterval',
      tuning.transactionCheckInterval,
      d.transactionCheckInterval,
      1,
      2 ** 31 - 1,
    ),
    transactionTimeOut: intSetting(
      'transactionTimeOut',
      tuning.transactionTimeOut,
      d.transactionTimeOut,
      0,
      2 ** 31 - 1,
    ),
    transactionCheckMax: intSetting(
      'transactionCheckMax',
      tuning.transactionCheckMax,
      d.transactionCheckMax,
      1,
      1_000_000,
    ),
    rejectTransactionMessage: tuning.rejectTransactionMessage ?? d.rejectTransactionMessage,
    fileReservedTimeMs: d.fileReservedTimeMs,
    maxEndedHalves: intSetting('maxEndedHalves', tuning.maxEndedHalves, d.maxEndedHalves, 1, 10_000_000),
  };
}

export function createTransactions(ctx: BrokerContext, tuning: TransactionTuning): Transactions {
  const service = new TransactionalMessageService(ctx, resolveTransactionSettings(tuning));
  const check = new TransactionalMessageCheckService(ctx, service);
  const end = new EndTransactionProcessor(ctx, service);
  return {
    service,
    check,
    end,
    register: (server) => end.register(server),
    start: () => {
      service.loadEnded();
      check.start();
    },
    close: () => check.close(),
  };
}
