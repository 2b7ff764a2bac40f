import { RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, MessageSysFlag, RequestCode, SendMessageRequestHeader } from '../../protocol/index.js';

/** The sysFlag of a zlib-compressed body. */
export const COMPRESSED_ZLIB = MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE;

/**
 * Stores one message the way a careless (or hostile) producer can: SEND_MESSAGE with the sysFlag
 * given and the body as is. The broker stores it without looking at the body, as Java's does.
 */
export async function sendRaw(
  brokerAddr: string,
  topic: string,
  queueId: number,
  body: Buffer,
  sysFlag: number,
  tags?: string,
): Promise<void> {
  const client = new RemotingClient();
  try {
    const extFields = SendMessageRequestHeader.encode({
      producerGroup: 'poison_pg',
      topic,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: 4,
      queueId,
      sysFlag,
      bornTimestamp: Date.now(),
      flag: 0,
      properties: tags ? `TAGS\u0001${tags}\u0002` : '',
    });
    const res = await client.invoke(brokerAddr, createRequest(RequestCode.SEND_MESSAGE, { extFields, body }), {
      timeoutMs: 3000,
    });
    if (res.code !== 0) throw new Error(`send failed: ${res.code} ${res.remark}`);
  } finally {
    await client.close();
  }
}
