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
    else if (Array.isArray(raw) && raw.every((x) => typeof x === 'number'))
      bytes = Buffer.from((raw as number[]).map((x) => x & 0xff));
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

export const BatchAckMessageRequestBody = {
  encode: encodeBatchAckMessageRequestBody,
  decode: decodeBatchAckMessageRequestBody,
} as const;

/** MessageRequestMode: how a group consumes a topic, set per topic@group on the broker. */
export type MessageRequestMode = 'PULL' | 'POP';

function readMode(o: Record<string, unknown>, key: string, path: string): MessageRequestMode {
  const v = o[key] ?? 'PULL';
  if (v !== 'PULL' && v !== 'POP') throw bodyError(`${path}.${key}`, 'is not PULL or POP');
  return v;
}

/**
 * QUERY_ASSIGNMENT (400, 5.x) request body, `QueryAssignmentRequestBody` (no header):
 * `{topic, consumerGroup, clientId, strategyName, messageModel}`. Sent every rebalance by a push
 * consumer with clientRebalance=false; strategyName is AVG or AVG_BY_CIRCLE.
 */
export interface QueryAssignmentRequestBody {
  topic: string;
  consumerGroup: string;
  clientId: string;
  strategyName: string;
  messageModel: 'CLUSTERING' | 'BROADCASTING';
}
export const QueryAssignmentRequestBody = {
  encode(b: QueryAssignmentRequestBody): Buffer {
    return Buffer.from(
      JSON.stringify({
        clientId: b.clientId,
        consumerGroup: b.consumerGroup,
        messageModel: b.messageModel,
        strategyName: b.strategyName,
        topic: b.topic,
      }),
      'utf8',
    );
  },
  decode(body: Buffer | Uint8Array): QueryAssignmentRequestBody {
    const o = asObject(parseFastjsonBody(body), 'QueryAssignmentRequestBody');
    const mm = o.messageModel ?? 'CLUSTERING';
    if (mm !== 'CLUSTERING' && mm !== 'BROADCASTING')
      throw bodyError('QueryAssignmentRequestBody.messageModel', 'is not CLUSTERING or BROADCASTING');
    return {
      topic: reqString(o, 'topic', 'QueryAssignmentRequestBody'),
      consumerGroup: reqString(o, 'consumerGroup', 'QueryAssignmentRequestBody'),
      clientId: reqString(o, 'clientId', 'QueryAssignmentRequestBody'),
      strategyName: typeof o.strategyName === 'string' ? o.strategyName : '',
      messageModel: mm,
    };
  },
} as const;

/** One assigned queue (`MessageQueueAssignment`): queueId −1 means every queue of the broker (POP). */
export interface MessageQueueAssignment {
  messageQueue: { topic: string; brokerName: string; queueId: number };
  mode: MessageRequestMode;
  attachments?: Record<string, string> | undefined;
}
/** QUERY_ASSIGNMENT response body: `{messageQueueAssignments:[…]}`; null (no key) when the broker could not assign. */
export interface QueryAssignmentResponseBody {
  messageQueueAssignments: MessageQueueAssignment[] | null;
}
export const QueryAssignmentResponseBody = {
  encode(b: QueryAssignmentResponseBody): Buffer {
    return Buffer.from(
      JSON.stringify(
        b.messageQueueAssignments === null
          ? {}
          : {
              messageQueueAssignments: b.messageQueueAssignments.map((a) => ({
                messageQueue: {
                  brokerName: a.messageQueue.brokerName,
                  queueId: a.messageQueue.queueId,
                  topic: a.messageQueue.topic,
                },
                mode: a.mode,
              })),
            },
      ),
      'utf8',
    );
  },
  decode(body: Buffer | Uint8Array): QueryAssignmentResponseBody {
    const o = asObject(parseFastjsonBody(body), 'QueryAssignmentResponseBody');
    if (o.messageQueueAssignments == null) return { messageQueueAssignments: null };
    return {
      messageQueueAssignments: asArray(o.messageQueueAssignments, 'messageQueueAssignments').map((v, i) => {
        const path = `messageQueueAssignments[${i}]`;
        const a = asObject(v, path);
        const mq = asObject(a.messageQueue, `${path}.messageQueue`);
        return {
          messageQueue: {
            topic: reqString(mq, 'topic', `${path}.messageQueue`),
            brokerName: reqString(mq, 'brokerName', `${path}.messageQueue`),
            queueId: reqNumber(mq, 'queueId', `${path}.messageQueue`),
          },
          mode: readMode(a, 'mode', path),
        };
      }),
    };
  },
} as const;

/** SET_MESSAGE_REQUEST_MODE (401) request body, `SetMessageRequestModeRequestBody`: `{topic, consumerGroup, mode, popShareQueueNum}`. */
export interface SetMessageRequestModeRequestBody {
  topic: string;
  consumerGroup: string;
  mode: MessageRequestMode;
  popShareQueueNum: number;
}
export const SetMessageRequestModeRequestBody = {
  encode(b: SetMessageRequestModeRequestBody): Buffer {
    return Buffer.from(
      JSON.stringify({
        consumerGroup: b.consumerGroup,
        mode: b.mode,
        popShareQueueNum: b.popShareQueueNum,
        topic: b.topic,
      }),
      'utf8',
    );
  },
  decode(body: Buffer | Uint8Array): SetMessageRequestModeRequestBody {
    const o = asObject(parseFastjsonBody(body), 'SetMessageRequestModeRequestBody');
    return {
      topic: reqString(o, 'topic', 'SetMessageRequestModeRequestBody'),
      consumerGroup: reqString(o, 'consumerGroup', 'SetMessageRequestModeRequestBody'),
      mode: readMode(o, 'mode', 'SetMessageRequestModeRequestBody'),
      popShareQueueNum: typeof o.popShareQueueNum === 'number' ? o.popShareQueueNum : 0,
    };
  },
} as const;
