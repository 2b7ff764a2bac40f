import t from 'tap';
import {
  createResponse,
  encodeCommand,
  HeaderFieldError,
  RequestCode,
  ResponseCode,
  RocketwireError,
  type RemotingCommand,
} from '../../protocol/index.js';
import { MQClientAPI, ResponseFieldError } from '../../lib/client/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { scriptedServer } from '../remoting/scripted-server.js';

// A hostile broker: answers every request with SUCCESS and the extFields the test scripts.
async function garbledBroker(
  t: { teardown(fn: () => Promise<void>): void },
  ext: (req: RemotingCommand) => Record<string, string> | null,
) {
  const server = await scriptedServer((req, peer) => {
    peer.socket.write(encodeCommand(createResponse(req, ResponseCode.SUCCESS, { extFields: ext(req) })));
  });
  const remoting = new RemotingClient();
  const api = new MQClientAPI({
    remoting,
    clientId: 'c1',
    apiTimeoutMs: 2000,
    language: 'JAVA',
    version: 409,
    serializeType: 'JSON',
  });
  t.teardown(async () => {
    await remoting.close();
    await server.close();
  });
  return { api, addr: server.addr };
}

const mq = { topic: 'T', brokerName: 'broker-a', queueId: 1 };

t.test('a garbled offset is a ResponseFieldError naming field, request code and peer, never a default', async (t) => {
  const { api, addr } = await garbledBroker(t, () => ({ offset: '12x' }));
  for (const [name, call, code] of [
    ['QUERY_CONSUMER_OFFSET', () => api.queryConsumerOffset(addr, 'g', mq), RequestCode.QUERY_CONSUMER_OFFSET],
    ['GET_MAX_OFFSET', () => api.getMaxOffset(addr, mq), RequestCode.GET_MAX_OFFSET],
    ['GET_MIN_OFFSET', () => api.getMinOffset(addr, mq), RequestCode.GET_MIN_OFFSET],
    [
      'SEARCH_OFFSET_BY_TIMESTAMP',
      () => api.searchOffsetByTimestamp(addr, mq, 1),
      RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
    ],
  ] as const) {
    const err = await call().then(
      (v) => v,
      (e: unknown) => e,
    );
    t.type(err, ResponseFieldError, `${name}: typed error, not ${String(err)}`);
    t.type(err, RocketwireError);
    const e = err as ResponseFieldError;
    t.equal(e.name, 'ResponseFieldError');
    t.equal(e.field, 'offset');
    t.equal(e.requestCode, code);
    t.equal(e.addr, addr);
    t.type(e.cause, HeaderFieldError);
    t.match(e.message, new RegExp(`^${name} response from ${addr.replace(/\./g, '\\.')}: header field "offset"`));
  }
});

t.test('a SUCCESS without the offset field is a ResponseFieldError too', async (t) => {
  const { api, addr } = await garbledBroker(t, () => null);
  await t.rejects(api.queryConsumerOffset(addr, 'g', mq), {
    name: 'ResponseFieldError',
    field: 'offset',
    requestCode: RequestCode.QUERY_CONSUMER_OFFSET,
    addr,
  });
  await t.rejects(api.getMaxOffset(addr, mq), {
    name: 'ResponseFieldError',
    field: 'offset',
    requestCode: RequestCode.GET_MAX_OFFSET,
    addr,
  });
});

t.test('a pull answer with a garbled nextBeginOffset is a ResponseFieldError', async (t) => {
  const { api, addr } = await garbledBroker(t, () => ({
    nextBeginOffset: 'NaN',
    minOffset: '0',
    maxOffset: '0',
    suggestWhichBrokerId: '0',
  }));
  const pull = {
    consumerGroup: 'g',
    topic: 'T',
    queueId: 1,
    queueOffset: 0,
    maxMsgNums: 32,
    sysFlag: 2,
    commitOffset: -1,
    suspendTimeoutMillis: 15000,
    subVersion: 1,
  };
  await t.rejects(api.pullMessage(addr, pull, 2000), {
    name: 'ResponseFieldError',
    field: 'nextBeginOffset',
    requestCode: RequestCode.PULL_MESSAGE,
    addr,
  });
});
