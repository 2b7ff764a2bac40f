import { parseFastjsonBody } from '../json/fastjson-parse.js';
import type { PopRetryMark } from '../pop-extra-info.js';
import { asArray, asObject, bodyError, reqNumber, reqString } from './shape.js';

/**
 * BATCH_ACK_MESSAGE (200151, 5.1.3+) request body, `BatchAckMessageRequestBody` (no header):
 * `{"brokerName":…,"acks":[BatchAck…]}`. Each BatchAck (R/body/BatchAck) acks offsets of one
 * checkpoint: fastjson keys `c` group, `t` the ORIGINAL topic (the broker adds the retry prefix
 * from `r`), `r` retry mark, `so` checkpoint start offset, `q` queueId, `rq` reviveQid, `pt`
 * popTime, `it` invisibleTime, `b` the acked offsets as a BitSet (bit i acks so+i), written by
 * BitSetSerializerDeserializer as `BitSet.toByteArray()` in fastjson's byte[] form: base64.
 */
export interface BatchAck {
  consumerGroup: string;
  topic: string;
  retry: PopRetryMark;
  startOffset: number;
  queueId: number;
  reviveQueueId: number;
  popTime: number;
  invisibleTime: number;
  /** Offsets − startOffset of the acked messages. */
  bits: number[];
}
export interface BatchAckMessageRequestBody {
  brokerName: string;
  acks: BatchAck[];
}

/** BitSet.toByteArray: little-endian bytes, bit i at byte i>>3 bit i&7, trailing zero bytes dropped. */
export function bitSetToBytes(bits: readonly number[]): Buffer {
  let max = -1;
  for (const b of bits) if (b > max) max = b;
  const out = Buffer.alloc(max < 0 ? 0 : (max >> 3) + 1);
  for (const b of bits) out[b >> 3]! |= 1 << (b & 7);
  return out;
}
export function bitSetFromBytes(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) for (let j = 0; j < 8; j++) if (bytes[i]! & (1 << j)) out.push(i * 8 + j);
  return out;
}

export function encodeBatchAckMessageRequestBody(b: BatchAckMessageRequestBody): Buffer {
  return Buffer.from(
    JSON.stringify({
      acks: b.acks.map((a) => ({
        b: bitSetToBytes(a.bits).toString('base64'),
        c: a.consumerGroup,
        it: a.invisibleTime,
        pt: a.popTime,
        q: a.queueId,
        r: a.retry,
        rq: a.reviveQueueId,
        so: a.startOffset,
        t: a.topic,
      })),
      brokerName: b.brokerName,
    }),
    'utf8',
  );
}

/** Reads Java's short keys and its alternate long names (consumerGroup, topic, …), as fastjson does. */
export function decodeBatchAckMessageRequestBody(body: Buffer | Uint8Array): BatchAckMessageRequestBody {
  const o = asObject(parseFastjsonBody(body), 'BatchAckMessageRequestBody');
  const acks = asArray(o.acks, 'acks').map((v, i) => {
    const path = `acks[${i}]`;
    const a = asObject(v, path);
    const pick = (short: string, long: string): string => (a[short] !== undefined ? short : long);
    const retry = reqString(a, pick('r', 'retry'), path);
    if (retry !== '0' && retry !== '1' && retry !== '2') throw bodyError(`${path}.r`, 'is not 0, 1 or 2');
    const bitsKey = pick('b', 'bitSet');
    const raw = a[bitsKey];
    let bytes: Buffer;
    if (typeof raw === 'string') bytes = Buffer.from(raw, 'base64');
    else if (Array.isArray(raw) && raw.every((x) => typeof x === 'number')) bytes = Buffer.from((raw as number[]).map((x) => x & 0xff));
    else if (raw == null) bytes = Buffer.alloc(0);
    else throw bodyError(`${path}.${bitsKey}`, 'is not a byte array');
    return {
      consumerGroup: reqString(a, pick('c', 'consumerGroup'), path),
      topic: reqString(a, pick('t', 'topic'), path),
      retry: retry as PopRetryMark,
      startOffset: reqNumber(a, pick('so', 'startOffset'), path),
      queueId: reqNumber(a, pick('q', 'queueId'), path),
      reviveQueueId: reqNumber(a, pick('rq', 'reviveQueueId'), path),
      popTime: reqNumber(a, pick('pt', 'popTime'), path),
      invisibleTime: reqNumber(a, pick('it', 'invisibleTime'), path),
      bits: bitSetFromBytes(bytes),
    };
  });
  return { brokerName: typeof o.brokerName === 'string' ? o.brokerName : '', acks };
}

export const BatchAckMessageRequestBody = { encode: encodeBatchAckMessageRequestBody, decode: decodeBatchAckMessageRequestBody } as const;
