// The client side of CHECK_TRANSACTION_STATE (lib/client/transaction-check.ts, Java's
// ClientRemotingProcessor#checkTransactionState): the producer is picked by the body's PGROUP; a
// stranger's group or a body that does not decode is dropped, and nothing is ever answered.
import t from 'tap';
import { serveCheckTransactionState, type TransactionCheckHandler } from '../../lib/client/index.js';
import {
  CheckTransactionStateRequestHeader,
  createRequest,
  encodeStoredMessage,
  RequestCode,
} from '../../protocol/index.js';

function checkRequest(props: Record<string, string>, body?: Buffer) {
  const msg = encodeStoredMessage({
    topic: 'RealTopic',
    queueId: 2,
    queueOffset: 7,
    commitLogOffset: 1234,
    bornTimestamp: 1,
    bornHost: '127.0.0.1:1',
    storeTimestamp: 2,
    storeHost: '127.0.0.1:10911',
    body: Buffer.from('b'),
    properties: props,
  });
  const extFields = {
    ...CheckTransactionStateRequestHeader.encode({
      topic: 'RMQ_SYS_TRANS_HALF_TOPIC',
      tranStateTableOffset: 7,
      commitLogOffset: 1234,
      msgId: 'U1',
      transactionId: 'U1',
    }),
    bname: 'broker-a',
  };
  return createRequest(RequestCode.CHECK_TRANSACTION_STATE, { oneway: true, extFields, body: body ?? msg });
}

t.test('picked by PGROUP, header and broker name handed over, nothing answered', async (t) => {
  const calls: Parameters<TransactionCheckHandler>[] = [];
  const handlers = new Map<string, TransactionCheckHandler>([['pg_a', (...a) => calls.push(a)]]);
  t.equal(
    serveCheckTransactionState(checkRequest({ PGROUP: 'pg_a', UNIQ_KEY: 'U1' }), '127.0.0.1:10911', handlers),
    null,
  );
  t.equal(calls.length, 1);
  const [addr, msg, header] = calls[0]!;
  t.equal(addr, '127.0.0.1:10911', 'the answer goes back to the broker that asked');
  t.equal(msg.topic, 'RealTopic');
  t.equal(msg.msgId, 'U1');
  t.match(header, { tranStateTableOffset: 7, commitLogOffset: 1234, transactionId: 'U1', bname: 'broker-a' });
  t.equal(
    serveCheckTransactionState(checkRequest({ PGROUP: 'pg_other' }), 'x:1', handlers),
    null,
    'a group this process does not produce for',
  );
  t.equal(serveCheckTransactionState(checkRequest({}), 'x:1', handlers), null, 'no PGROUP');
  t.equal(
    serveCheckTransactionState(checkRequest({ PGROUP: 'pg_a' }, Buffer.from([0, 0, 0, 9, 1, 2])), 'x:1', handlers),
    null,
    'a body that does not decode',
  );
  t.equal(calls.length, 1, 'none of those reached the producer');
});
