// Shared by the transaction tests: raw pulls of a whole topic from the embedded broker.
import {
  createRequest,
  decodeMessages,
  PullMessageRequestHeader,
  RequestCode,
  ResponseCode,
  type MessageExt,
} from '../../protocol/index.js';
import type { RemotingClient } from '../../lib/remoting/index.js';

/** Every message of `topic` on the broker at `addr`, read from offset 0 with plain PULL_MESSAGE requests. */
export async function pullTopic(
  client: RemotingClient,
  addr: string,
  topic: string,
  queues: number,
): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  for (let queueId = 0; queueId < queues; queueId++) {
    let offset = 0;
    for (;;) {
      const header = PullMessageRequestHeader.encode({
        consumerGroup: 'tx_raw_reader',
        topic,
        queueId,
        queueOffset: offset,
        maxMsgNums: 32,
        sysFlag: 4,
        commitOffset: 0,
        suspendTimeoutMillis: 0,
        subscription: '*',
        subVersion: 0,
        expressionType: 'TAG',
      });
      const res = await client.invoke(addr, createRequest(RequestCode.PULL_MESSAGE, { extFields: header }), {
        timeoutMs: 3000,
      });
      if (res.code !== ResponseCode.SUCCESS) break;
      out.push(...decodeMessages(res.body!));
      offset = Number(res.extFields!.nextBeginOffset);
    }
  }
  return out;
}
