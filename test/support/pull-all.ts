import {
  createRequest,
  decodeMessages,
  type MessageExt,
  PullMessageRequestHeader,
  RequestCode,
  ResponseCode,
} from '../../protocol/index.js';
import type { RemotingClient } from '../../lib/remoting/index.js';

/**
 * Every message of queue `queueId` of `topic` on the broker at `addr`, from offset 0, read with plain
 * PULL_MESSAGE requests (no consumer, no subscription kept): what the broker stored, as stored.
 */
export async function pullAll(
  client: RemotingClient,
  addr: string,
  topic: string,
  queueId: number,
): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  let offset = 0;
  for (;;) {
    const header = PullMessageRequestHeader.encode({
      consumerGroup: 'raw_reader',
      topic,
      queueId,
      queueOffset: offset,
      maxMsgNums: 32,
      sysFlag: 0 | 4,
      commitOffset: 0,
      suspendTimeoutMillis: 0,
      subscription: '*',
      subVersion: 0,
      expressionType: 'TAG',
    });
    const res = await client.invoke(addr, createRequest(RequestCode.PULL_MESSAGE, { extFields: header }), {
      timeoutMs: 3000,
    });
    if (res.code !== ResponseCode.SUCCESS) return out;
    out.push(...decodeMessages(res.body!));
    offset = Number(res.extFields!.nextBeginOffset);
  }
}
