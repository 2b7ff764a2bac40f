import t from 'tap';
import {
  HeaderFieldError,
  operationOf,
  Operations,
  RequestCode,
  ResponseCode,
  type FieldKind,
  type HeaderCodec,
  type Operation,
} from '../../protocol/internal.js';

const rows = Object.entries(Operations) as [string, Operation][];
const responseCodes = new Set<number>(Object.values(ResponseCode));

const SAMPLE: Record<FieldKind, () => unknown> = {
  string: () => 'v\u00e9 "x"',
  int: () => -2147483648,
  long: () => 9007199254740991,
  boolean: () => true,
  double: () => 0.25,
};

function sample(codec: HeaderCodec<unknown>, all: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of codec.fields) if (all || f.required) out[f.name] = SAMPLE[f.kind]();
  return out;
}

t.test('every row is keyed by its RequestCode name and carries that code', async (t) => {
  t.ok(rows.length > 0);
  const seen = new Map<number, string>();
  for (const [key, op] of rows) {
    t.equal(op.name, key, `${key}: name`);
    t.equal(op.code, (RequestCode as Record<string, number>)[key], `${key}: code is RequestCode.${key}`);
    t.notOk(seen.has(op.code), `${key}: code ${op.code} has one row (also ${seen.get(op.code)})`);
    seen.set(op.code, key);
    t.equal(operationOf(op.code), op, `${key}: operationOf finds the row`);
    t.ok(Object.isFrozen(op), `${key}: frozen`);
  }
  t.equal(operationOf(-12345), undefined);
});

t.test('answers are non-SUCCESS response codes', async (t) => {
  for (const [key, op] of rows) {
    for (const c of op.answers) {
      t.ok(responseCodes.has(c), `${key}: answer ${c} is a ResponseCode`);
      t.not(c, ResponseCode.SUCCESS, `${key}: SUCCESS is implied, not listed`);
    }
    t.equal(new Set(op.answers).size, op.answers.length, `${key}: no duplicate answers`);
  }
});

t.test('header codecs round-trip every field and reject a missing required one', async (t) => {
  for (const [key, op] of rows) {
    for (const [side, codec] of [
      ['request', op.request],
      ['response', op.response],
    ] as const) {
      const keys = codec.fields.map((f) => f.key);
      t.equal(new Set(keys).size, keys.length, `${key} ${side}: extFields keys are distinct`);
      for (const all of [true, false]) {
        const fields = sample(codec, all);
        const ext = codec.encode(fields);
        for (const v of Object.values(ext)) t.type(v, 'string');
        t.same(
          Object.keys(ext),
          codec.fields.filter((f) => all || f.required).map((f) => f.key),
          `${key} ${side}: keys in spec order`,
        );
        t.same(codec.decode(ext), fields, `${key} ${side}: decode(encode(x)) = x (${all ? 'all' : 'required'} fields)`);
      }
      for (const f of codec.fields.filter((f) => f.required)) {
        const ext = codec.encode(sample(codec, true));
        delete ext[f.key];
        t.throws(() => codec.decode(ext), HeaderFieldError, `${key} ${side}: missing ${f.key} is refused`);
      }
    }
  }
});

t.test('body specs are raw, none or a codec', async (t) => {
  for (const [key, op] of rows) {
    for (const b of [op.requestBody, op.responseBody]) {
      if (b === 'raw' || b === 'none') continue;
      t.type(b.encode, 'function', `${key}: encode`);
      t.type(b.decode, 'function', `${key}: decode`);
    }
  }
});

t.test('rows that carry a fact worth pinning', async (t) => {
  t.same(Operations.PULL_MESSAGE.answers, [
    ResponseCode.PULL_NOT_FOUND,
    ResponseCode.PULL_RETRY_IMMEDIATELY,
    ResponseCode.PULL_OFFSET_MOVED,
  ]);
  t.same(Operations.QUERY_CONSUMER_OFFSET.answers, [ResponseCode.QUERY_NOT_FOUND]);
  t.equal(Operations.SEND_MESSAGE_V2.request.keys.producerGroup, 'a', 'V2 one-letter keys');
  t.equal(Operations.SEND_BATCH_MESSAGE.request, Operations.SEND_MESSAGE_V2.request);
});
