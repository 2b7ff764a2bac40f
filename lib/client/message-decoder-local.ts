import { inflateSync } from 'node:zlib';
import { ProtocolError } from '../../protocol/index.js';
import type { MessageExtLike } from './consumer-inner.js';

/**
 * Private stand-in for protocol's decodeMessages until it is exported: decodes concatenated stored
 * records (§7.1). zlib is the only codec inflated here; like Java it stops at the first broken record.
 */
export function decodeMessagesLocal(buf: Buffer): MessageExtLike[] {
  const out: MessageExtLike[] = [];
  let p = 0;
  while (p + 4 <= buf.length) {
    const total = buf.readInt32BE(p);
    if (total <= 0 || p + total > buf.length) break;
    try {
      out.push(decodeOne(buf.subarray(p, p + total)));
    } catch {
      break;
    }
    p += total;
  }
  return out;
}

function host(b: Buffer, at: number, v6: boolean): [string, number] {
  if (v6) {
    const parts: string[] = [];
    for (let i = 0; i < 8; i++) parts.push(b.readUInt16BE(at + i * 2).toString(16));
    return [`[${parts.join(':')}]:${b.readInt32BE(at + 16)}`, at + 20];
  }
  return [`${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}:${b.readInt32BE(at + 4)}`, at + 8];
}

function decodeOne(b: Buffer): MessageExtLike {
  const magic = b.readInt32BE(4);
  const bodyCRC = b.readInt32BE(8);
  const queueId = b.readInt32BE(12);
  const flag = b.readInt32BE(16);
  // Offsets and timestamps are int64 but stay below 2^53 for any real store.
  const queueOffset = Number(b.readBigInt64BE(20));
  const commitLogOffset = Number(b.readBigInt64BE(28));
  let sysFlag = b.readInt32BE(36);
  const bornTimestamp = Number(b.readBigInt64BE(40));
  const [bornHost, p0] = host(b, 48, (sysFlag & 0x10) !== 0);
  const storeTimestamp = Number(b.readBigInt64BE(p0));
  let [storeHost, p] = host(b, p0 + 8, (sysFlag & 0x20) !== 0);
  const reconsumeTimes = b.readInt32BE(p);
  const preparedTransactionOffset = Number(b.readBigInt64BE(p + 4));
  const bodyLen = b.readInt32BE(p + 12);
  p += 16;
  let body = b.subarray(p, p + bodyLen);
  p += bodyLen;
  let topicLen: number;
  if (magic === -626843477) {
    topicLen = b.readInt16BE(p);
    p += 2;
  } else {
    topicLen = b.readInt8(p);
    p += 1;
  }
  const topic = b.toString('utf8', p, p + topicLen);
  p += topicLen;
  const propLen = b.readInt16BE(p);
  p += 2;
  const props: Record<string, string> = {};
  for (const seg of b.toString('utf8', p, p + propLen).split('\u0002')) {
    const i = seg.indexOf('\u0001');
    if (seg.length < 3 || i <= 0 || i === seg.length - 1) continue;
    props[seg.slice(0, i)] = seg.slice(i + 1);
  }
  if ((sysFlag & 0x1) !== 0) {
    const type = (sysFlag & 0x700) >> 8;
    if (type !== 0 && type !== 3) throw new ProtocolError('unsupported compression', 36);
    body = inflateSync(body);
    sysFlag &= ~0x1;
  }
  const offsetMsgId = offsetId(storeHost, commitLogOffset, (sysFlag & 0x20) !== 0);
  return {
    topic,
    queueId,
    flag,
    queueOffset,
    commitLogOffset,
    sysFlag,
    bornTimestamp,
    bornHost,
    storeTimestamp,
    storeHost,
    reconsumeTimes,
    preparedTransactionOffset,
    bodyCRC,
    storeSize: b.length,
    properties: props,
    body,
    msgId: props.UNIQ_KEY ?? offsetMsgId,
    offsetMsgId,
    tags: props.TAGS,
    keys: props.KEYS,
  };
}

function offsetId(storeHost: string, commitLogOffset: number, v6: boolean): string {
  const idx = storeHost.lastIndexOf(':');
  const ip = storeHost.slice(0, idx).replace(/^\[|\]$/g, '');
  const port = Number(storeHost.slice(idx + 1));
  const ipBytes = v6 ? Buffer.alloc(16) : Buffer.from(ip.split('.').map(Number));
  if (v6) {
    const parts = ip.split(':');
    parts.forEach((h, i) => ipBytes.writeUInt16BE(parseInt(h, 16), i * 2));
  }
  const tail = Buffer.alloc(12);
  tail.writeInt32BE(port, 0);
  tail.writeBigInt64BE(BigInt(commitLogOffset), 4);
  return Buffer.concat([ipBytes, tail]).toString('hex').toUpperCase();
}
