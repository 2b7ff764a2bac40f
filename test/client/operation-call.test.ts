// The client's call path (lib/client/operation-call.ts): a reply is SUCCESS or one of the row's
// answer codes, any other code a BrokerError; an answer code's header is read only when asked.
import t from 'tap';
import { call, readCallReply, serveProcessor, type RequestStamp } from '../../lib/client/index.js';
import { BrokerError, type RemotingClient, type RemotingConnection } from '../../lib/remoting/index.js';
import {
  createRequest,
  createResponse,
  Operations,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/internal.js';

const stamp: RequestStamp = { language: 'JAVA', version: 409, serializeType: 'JSON' };

function fakeRemoting(answer: (req: RemotingCommand) => RemotingCommand) {
  const sent: { req: RemotingCommand; oneway: boolean }[] = [];
  const remoting = {
    invoke: async (_addr: string, req: RemotingCommand) => {
      sent.push({ req, oneway: false });
      return answer(req);
    },
    invokeOneway: async (_addr: string, req: RemotingCommand) => {
      sent.push({ req, oneway: true });
    },
  } as unknown as RemotingClient;
  return { remoting, sent };
}

t.test('SUCCESS and the row answer codes resolve; others are BrokerError', async (t) => {
  const op = Operations.QUERY_CONSUMER_OFFSET;
  const header = { consumerGroup: 'g', topic: 'T', queueId: 0 };
  let code: number = ResponseCode.SUCCESS;
  const { remoting, sent } = fakeRemoting((req) =>
    createResponse(req, code, code === ResponseCode.SUCCESS ? { extFields: { offset: '5' } } : { remark: 'r' }),
  );
  const ok = await call(remoting, stamp, 'b:1', op, header, undefined, { timeoutMs: 100 });
  t.equal(ok.code, ResponseCode.SUCCESS);
  t.equal(ok.header.offset, 5);
  t.same(sent[0]!.req.extFields, { consumerGroup: 'g', topic: 'T', queueId: '0' });

  code = ResponseCode.QUERY_NOT_FOUND;
  const notFound = await call(remoting, stamp, 'b:1', op, header, undefined);
  t.equal(notFound.code, ResponseCode.QUERY_NOT_FOUND, 'an answer, not an error');
  t.equal(notFound.remark, 'r');
  t.throws(() => notFound.header.offset, { name: 'ResponseFieldError' }, 'its header is read only when asked');

  code = ResponseCode.SYSTEM_ERROR;
  await t.rejects(call(remoting, stamp, 'b:1', op, header, undefined), BrokerError);
});

t.test('oneway resolves without a reply; remark and encoded body are stamped', async (t) => {
  const { remoting, sent } = fakeRemoting(() => {
    throw new Error('no answer expected');
  });
  const end = {
    producerGroup: 'pg',
    tranStateTableOffset: 1,
    commitLogOffset: 2,
    commitOrRollback: 8,
    msgId: 'm',
  };
  t.equal(
    await call(remoting, stamp, 'b:1', Operations.END_TRANSACTION, end, undefined, { oneway: true, remark: 'why' }),
    undefined,
  );
  t.equal(sent[0]!.oneway, true);
  t.equal(sent[0]!.req.remark, 'why');
  t.equal(sent[0]!.req.flag & 2, 2, 'the oneway flag');
});

t.test('readCallReply decodes a SUCCESS header at once', async (t) => {
  const req = createRequest(Operations.GET_MAX_OFFSET.code);
  t.throws(() => readCallReply(Operations.GET_MAX_OFFSET, createResponse(req, ResponseCode.SUCCESS), 'b:1'), {
    name: 'ResponseFieldError',
  });
});

t.test('serve: decoded by the row, answered by it, null for none', async (t) => {
  const op = Operations.GET_CONSUMER_STATUS_FROM_CLIENT;
  const mq = { topic: 'T', brokerName: 'b', queueId: 0 };
  const processor = serveProcessor(op, ({ header }) => ({
    body: { messageQueueTable: [[{ ...mq, topic: header.topic }, 3] as [typeof mq, number]] },
  }));
  const req = createRequest(op.code, { extFields: op.request.encode({ topic: 'T', group: 'g' }) });
  const res = (await processor(req, {} as RemotingConnection)) as RemotingCommand;
  t.equal(res.code, ResponseCode.SUCCESS);
  t.same(op.responseBody.decode(res.body!).messageQueueTable, [[mq, 3]]);

  const reset = Operations.RESET_CONSUMER_CLIENT_OFFSET;
  let seen: unknown = 'unset';
  const resetProcessor = serveProcessor(reset, ({ body }) => {
    seen = body;
    return null;
  });
  const resetReq = createRequest(reset.code, {
    extFields: reset.request.encode({ topic: 'T', group: 'g', timestamp: 0, isForce: true }),
  });
  t.equal(await resetProcessor(resetReq, {} as RemotingConnection), null);
  t.equal(seen, null, 'a request without a body hands null, as Java skips decoding it');
  t.throws(() => serveProcessor(op, () => null)(createRequest(op.code), {} as RemotingConnection), {
    name: 'HeaderFieldError',
  });
});
