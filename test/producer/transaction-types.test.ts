// Type-level test: this file compiles only if the listener forms a Node user writes are accepted by
// TransactionProducer (a lone literal, a ternary, a return in a block, the exported constants), and
// each `@ts-expect-error` line fails to compile if the form it marks were accepted. The run-time part
// checks the constants and that a value that is no state answers UNKNOW.
import t from 'tap';
import { LocalTransactionState, TransactionProducer, type TransactionListener } from '../../lib/producer/index.js';

const base = { group: 'tpg', namesrvAddr: '127.0.0.1:9876' };

/** Never called: every line must type-check (or fail where marked). */
export function typeChecks(flag: boolean): void {
  const listeners: TransactionListener[] = [
    { executeLocalTransaction: async () => 'COMMIT_MESSAGE', checkLocalTransaction: async () => 'UNKNOW' },
    {
      executeLocalTransaction: async () => (flag ? 'COMMIT_MESSAGE' : 'ROLLBACK_MESSAGE'),
      checkLocalTransaction: () => 'UNKNOW',
    },
    {
      executeLocalTransaction: async (msg) => {
        if (msg.topic === '') return LocalTransactionState.ROLLBACK_MESSAGE;
        return 'COMMIT_MESSAGE';
      },
      checkLocalTransaction: async () => LocalTransactionState.UNKNOW,
    },
    {
      executeLocalTransaction: () => LocalTransactionState.COMMIT_MESSAGE,
      checkLocalTransaction: () => (flag ? 'COMMIT_MESSAGE' : 'UNKNOW'),
    },
  ];
  for (const transactionListener of listeners) new TransactionProducer({ ...base, transactionListener });
  // @ts-expect-error a synchronous value is checked by the compiler: not a state
  const bad: TransactionListener = { executeLocalTransaction: () => 'COMMIT', checkLocalTransaction: () => 'UNKNOW' };
  void bad;
}

t.test("the LocalTransactionState constants are Java's names", async (t) => {
  t.same(LocalTransactionState, {
    COMMIT_MESSAGE: 'COMMIT_MESSAGE',
    ROLLBACK_MESSAGE: 'ROLLBACK_MESSAGE',
    UNKNOW: 'UNKNOW',
  });
  t.type(typeChecks, 'function');
});
