import { createResponse, RequestCode, ResponseCode, type RemotingCommand } from '../../protocol/index.js';
import { startFakeNode, type FakeNode, type Handler } from '../client/fake-cluster.js';

/**
 * A scripted broker with just enough of a broker for one push consumer: heartbeats, the consumer
 * list (the last heartbeat's client), no committed offset, max offset 0, unregistration; PULL_MESSAGE
 * is answered by `onPull`. Offset commits are recorded in `committed` (queueId → offset).
 */
export async function fakeConsumerBroker(onPull: Handler): Promise<FakeNode & { committed: Map<number, number> }> {
  const broker = (await startFakeNode()) as FakeNode & { committed: Map<number, number> };
  broker.committed = new Map();
  let clientId = '';
  broker.on(RequestCode.HEART_BEAT, (req) => {
    clientId = (JSON.parse(req.body!.toString()) as { clientID: string }).clientID;
    return createResponse(req, ResponseCode.SUCCESS);
  });
  broker.on(RequestCode.UNREGISTER_CLIENT, (req) => createResponse(req, ResponseCode.SUCCESS));
  broker.on(RequestCode.GET_CONSUMER_LIST_BY_GROUP, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(JSON.stringify({ consumerIdList: [clientId] })) }),
  );
  broker.on(RequestCode.QUERY_CONSUMER_OFFSET, (req) => createResponse(req, ResponseCode.QUERY_NOT_FOUND));
  broker.on(RequestCode.GET_MAX_OFFSET, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '0' } }),
  );
  broker.on(RequestCode.UPDATE_CONSUMER_OFFSET, (req: RemotingCommand) => {
    broker.committed.set(Number(req.extFields!.queueId), Number(req.extFields!.commitOffset));
    return createResponse(req, ResponseCode.SUCCESS);
  });
  broker.on(RequestCode.PULL_MESSAGE, onPull);
  return broker;
}
