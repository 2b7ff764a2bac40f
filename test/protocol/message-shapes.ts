/**
 * Stored records of every shape a consumer receives, for the message-shape test: the expected
 * outputs (JSON.stringify, spread, Object.keys) in test/fixtures/message-shapes/expected.json were
 * written once by `node dist/test/protocol/message-shapes.js --write` and are not to be rewritten:
 * the test holds any change to the decoder or to MessageExt to exactly what users saw.
 */
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import {
  decodeBatch,
  decodeMessages,
  encodeBatch,
  encodeStoredMessage,
  MessageSysFlag,
  type MessageExt,
  type StoredMessageInit,
} from '../../protocol/internal.js';
import { assignReceiptHandles } from '../../protocol/pop-extra-info.js';

const base: StoredMessageInit = {
  topic: 'Orders',
  queueId: 3,
  queueOffset: 41,
  commitLogOffset: 5_000_123_456,
  bornTimestamp: 1712345678901,
  bornHost: '192.168.1.10:54321',
  storeTimestamp: 1712345679000,
  storeHost: '192.168.1.20:10911',
  body: Buffer.from('hello, orders'),
};

const batchInner = decodeBatch(
  encodeBatch([
    {
      body: Buffer.from('first'),
      properties: { KEYS: 'b1', orderId: '7', UNIQ_KEY: 'C0A8010A00002A9F0000000000000001' },
    },
    { body: Buffer.from('second'), properties: { TAGS: 'B', WAIT: 'true' } },
  ]),
);

/** name → the records of one pull body. */
export function shapes(): Record<string, Buffer> {
  const rec = (o: Partial<StoredMessageInit>): Buffer => encodeStoredMessage({ ...base, ...o });
  return {
    'no properties': rec({ properties: '' }),
    'offsetMsgId only (no UNIQ_KEY), keys and tags': rec({
      properties: { TAGS: 'TagA', KEYS: 'k1  k2 k3', WAIT: 'true', orderId: '42', 'naïve ключ': 'värde ✓' },
    }),
    'UNIQ_KEY, user properties, duplicate name, empty value': rec({
      properties:
        'UNIQ_KEY\u0001C0A8010A00002A9F0000000000000ABC\u0002a\u00011\u0002b\u0001\u0002a\u00012\u0002\u0001x\u0002__proto__\u0001p\u0002',
    }),
    compressed: rec({
      sysFlag: MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE,
      body: deflateSync(Buffer.from('compressed body '.repeat(20))),
      properties: { TAGS: 'Z', UNIQ_KEY: 'C0A8010A00002A9F0000000000000DEF' },
    }),
    'batch inner messages': Buffer.concat(
      batchInner.map((m, i) =>
        rec({
          queueOffset: 50 + i,
          commitLogOffset: 6_000_000 + i * 300,
          body: m.body,
          properties: m.properties,
          flag: m.flag,
        }),
      ),
    ),
    transactional: rec({
      sysFlag: MessageSysFlag.TRANSACTION_COMMIT_TYPE,
      preparedTransactionOffset: 4_999_000_000,
      properties: {
        TRAN_MSG: 'true',
        PGROUP: 'pg',
        __transactionId__: 'tx-1',
        UNIQ_KEY: 'C0A8010A00002A9F0000000000000FED',
      },
    }),
    'retry, reconsumed': rec({
      topic: '%RETRY%cg',
      reconsumeTimes: 2,
      properties: {
        RETRY_TOPIC: 'Orders',
        ORIGIN_MESSAGE_ID: 'AB',
        REAL_TOPIC: '%RETRY%cg',
        MAX_RECONSUME_TIMES: '16',
      },
    }),
    'IPv6 born and store hosts': rec({
      bornHost: '[2001:db8::1]:54321',
      storeHost: '[fe80::1:2]:10911',
      properties: { TAGS: 'v6' },
    }),
    'magic v2, long topic': rec({ magic: 2, topic: 'T'.repeat(200), properties: { KEYS: 'x' } }),
    'POP with extra info': Buffer.concat([
      rec({ queueOffset: 7, properties: { TAGS: 'P' } }),
      rec({ queueOffset: 8, commitLogOffset: 5_000_124_000, properties: { POP_CK: 'already set' } }),
    ]),
  };
}

/** What a consumer does to a message before the handler sees it, done with plain property writes. */
export function popAssign(messages: MessageExt[]): void {
  assignReceiptHandles(
    messages,
    { popTime: 1712345680000, invisibleTime: 60000, reviveQid: 1, startOffsetInfo: '0 3 7', msgOffsetInfo: '0 3 7,8' },
    'broker-a',
    false,
  );
}

type SetProperty = (m: MessageExt, name: string, value: string) => void;
const plainSet: SetProperty = (m, name, value) => {
  m.properties[name] = value;
};

/**
 * What the push consumer does to a message before the handler sees it (the pull's MIN_OFFSET and
 * MAX_OFFSET, brokerName, CONSUME_START_TIME, the retry topic restored), writing properties with `set`.
 */
export function consumerTouch(messages: MessageExt[], set: SetProperty = plainSet): void {
  for (const m of messages) {
    set(m, 'MIN_OFFSET', '0');
    set(m, 'MAX_OFFSET', '99');
    m.brokerName = 'broker-a';
  }
  for (const m of messages) {
    if (m.topic === '%RETRY%cg') m.topic = m.properties.RETRY_TOPIC!;
    set(m, 'CONSUME_START_TIME', '1712345680001');
  }
}

export interface ShapeOutput {
  stringify: string;
  spread: string;
  keys: string[];
  spreadKeys: string[];
}

/** The three views of each message of a shape. */
export function outputs(messages: readonly MessageExt[]): ShapeOutput[] {
  return messages.map((m) => ({
    stringify: JSON.stringify(m),
    spread: JSON.stringify({ ...m }),
    keys: Object.keys(m),
    spreadKeys: Object.keys({ ...m }),
  }));
}

if (process.argv.includes('--write')) {
  const out: Record<string, { hex: string; outputs: ShapeOutput[] }> = {};
  for (const [name, body] of Object.entries(shapes())) {
    const msgs = decodeMessages(body);
    if (name === 'POP with extra info') popAssign(msgs);
    out[name] = { hex: body.toString('hex'), outputs: outputs(msgs) };
    const touched = decodeMessages(body);
    consumerTouch(touched);
    out[`${name}, as the push consumer hands it over`] = { hex: body.toString('hex'), outputs: outputs(touched) };
  }
  writeFileSync(
    new URL('../../../test/fixtures/message-shapes/expected.json', import.meta.url),
    JSON.stringify(out, null, 1) + '\n',
  );
}
