import { prepareRecord, stampRecord } from '../../lib/broker/message-record.js';
import { encodeProperties } from '../../protocol/internal.js';

/** One stored record of `topic` with `properties`, as the broker writes it, at queue offset `queueOffset`. */
export function createMessageRecord(topic: string, properties: Record<string, string>, queueOffset: number): Buffer {
  const inner = {
    topic,
    queueId: 0,
    flag: 0,
    sysFlag: 0,
    bornTimestamp: 1,
    bornHost: '127.0.0.1:1',
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    body: Buffer.from('x'),
    properties,
  };
  const b = prepareRecord(inner, '127.0.0.1:10911', encodeProperties(properties));
  stampRecord(b, queueOffset, 0, 2);
  return b;
}
