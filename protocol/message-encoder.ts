import { messageBodyCrc } from './crc32.js';
import { ProtocolError } from './errors.js';
import { writeInt64 } from './int64.js';
import type { StoredMessageInit } from './message-ext.js';
import { MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2, storedMessageSize } from './message-record.js';
import { encodeProperties, MAX_PROPERTIES_BYTES } from './properties.js';
import { parseSocketAddress, writeSocketAddress, type SocketAddressBytes } from './socket-address.js';
import { MessageSysFlag } from './sys-flag.js';

// A broker writes the same few host addresses over and over; parsing "ip:port" text each time
// cost more than the rest of the record. Bounded so a stream of distinct peers cannot grow it.
const addressCache = new Map<string, SocketAddressBytes>();
function address(text: string): SocketAddressBytes {
  let a = addressCache.get(text);
  if (a === undefined) {
    a = parseSocketAddress(text);
    if (addressCache.size >= 1024) addressCache.clear();
    addressCache.set(text, a);
  }
  return a;
}

function checkSafe(n: number, field: string): void {
  if (!Number.isSafeInteger(n)) throw new ProtocolError(`stored message ${field} ${n} is not a safe integer`, 0);
}
function checkInt32(n: number, field: string): void {
  if (!Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
    throw new ProtocolError(`stored message ${field} ${n} is not an int32`, 0);
  }
}

/**
 * Encode one commit-log record
 * (docs/protocol-facts.md#stored-record), exactly as a broker stores it and returns it in pull
 * bodies. The SYSFLAG IPv6 bits follow the host addresses; BODYCRC is computed unless given.
 */
export function encodeStoredMessage(init: StoredMessageInit): Buffer {
  checkInt32(init.queueId, 'queueId');
  checkInt32(init.flag ?? 0, 'flag');
  checkInt32(init.reconsumeTimes ?? 0, 'reconsumeTimes');
  checkSafe(init.queueOffset, 'queueOffset');
  checkSafe(init.commitLogOffset, 'commitLogOffset');
  checkSafe(init.bornTimestamp, 'bornTimestamp');
  checkSafe(init.storeTimestamp, 'storeTimestamp');
  checkSafe(init.preparedTransactionOffset ?? 0, 'preparedTransactionOffset');
  const born = address(init.bornHost);
  const store = address(init.storeHost);
  const bornV6 = born.ip.length === 16;
  const storeV6 = store.ip.length === 16;
  let sysFlag = (init.sysFlag ?? 0) & ~(MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
  if (bornV6) sysFlag |= MessageSysFlag.BORNHOST_V6_FLAG;
  if (storeV6) sysFlag |= MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;

  const topicLength = Buffer.byteLength(init.topic, 'utf8');
  const magic = init.magic ?? (topicLength > 127 ? 2 : 1);
  if (topicLength > (magic === 1 ? 127 : 32767)) {
    throw new ProtocolError(`stored message topic of ${topicLength} bytes is too long for magic v${magic}`, 0);
  }
  const propsText =
    init.properties === undefined
      ? ''
      : typeof init.properties === 'string'
        ? init.properties
        : encodeProperties(init.properties);
  const propsLength = Buffer.byteLength(propsText, 'utf8');
  if (propsLength > MAX_PROPERTIES_BYTES) {
    throw new ProtocolError(`stored message properties of ${propsLength} bytes exceed ${MAX_PROPERTIES_BYTES}`, 0);
  }
  const body = init.body;
  const size = storedMessageSize(body.length, topicLength, propsLength, {
    bornHostV6: bornV6,
    storeHostV6: storeV6,
    magic,
  });
  const b = Buffer.allocUnsafe(size);
  let p = 0;
  b.writeInt32BE(size, p);
  p += 4;
  b.writeInt32BE(magic === 1 ? MESSAGE_MAGIC_CODE_V1 : MESSAGE_MAGIC_CODE_V2, p);
  p += 4;
  b.writeInt32BE(init.bodyCRC ?? messageBodyCrc(body), p);
  p += 4;
  b.writeInt32BE(init.queueId, p);
  p += 4;
  b.writeInt32BE(init.flag ?? 0, p);
  p += 4;
  writeInt64(b, p, init.queueOffset);
  p += 8;
  writeInt64(b, p, init.commitLogOffset);
  p += 8;
  b.writeInt32BE(sysFlag | 0, p);
  p += 4;
  writeInt64(b, p, init.bornTimestamp);
  p += 8;
  p = writeSocketAddress(b, p, born);
  writeInt64(b, p, init.storeTimestamp);
  p += 8;
  p = writeSocketAddress(b, p, store);
  b.writeInt32BE(init.reconsumeTimes ?? 0, p);
  p += 4;
  writeInt64(b, p, init.preparedTransactionOffset ?? 0);
  p += 8;
  b.writeInt32BE(body.length, p);
  p += 4;
  b.set(body, p);
  p += body.length;
  if (magic === 1) {
    b.writeInt8(topicLength, p);
    p += 1;
  } else {
    b.writeInt16BE(topicLength, p);
    p += 2;
  }
  p += b.write(init.topic, p, 'utf8');
  b.writeInt16BE(propsLength, p);
  p += 2;
  p += b.write(propsText, p, 'utf8');
  if (p !== size) throw new ProtocolError(`stored message encoder wrote ${p} of ${size} bytes`, p);
  return b;
}
