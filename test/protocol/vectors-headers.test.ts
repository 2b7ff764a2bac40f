import t from 'tap';
import {
  ConsumerSendMsgBackRequestHeader,
  GetConsumerListByGroupRequestHeader,
  GetRouteInfoRequestHeader,
  PullMessageRequestHeader,
  PullMessageResponseHeader,
  QueryConsumerOffsetRequestHeader,
  QueryConsumerOffsetResponseHeader,
  SendMessageRequestHeaderV2,
  SendMessageResponseHeader,
  UpdateConsumerOffsetRequestHeader,
  HeaderFieldError,
  type HeaderCodec,
} from '../../protocol/index.js';
import { loadVectors, VECTOR_VERSIONS, type FrameVector } from './vectors-fixtures.js';

// Typed custom headers against the ext fields Java wrote: every value we would write equals
// Java's string, and for the FastCodesHeader types (written field by field in ROCKETMQ headers)
// our field order is Java's, so a ROCKETMQ frame built from a typed header is byte-identical.

const CODECS: [string, HeaderCodec<never>, boolean][] = [
  ['get-routeinfo-request', GetRouteInfoRequestHeader as HeaderCodec<never>, false],
  ['pull-request', PullMessageRequestHeader as HeaderCodec<never>, true],
  ['pull-request-minimal', PullMessageRequestHeader as HeaderCodec<never>, true],
  ['pull-response-found', PullMessageResponseHeader as HeaderCodec<never>, true],
  ['send-message-v2', SendMessageRequestHeaderV2 as HeaderCodec<never>, true],
  ['send-response', SendMessageResponseHeader as HeaderCodec<never>, true],
  ['query-consumer-offset', QueryConsumerOffsetRequestHeader as HeaderCodec<never>, false],
  ['query-consumer-offset-response', QueryConsumerOffsetResponseHeader as HeaderCodec<never>, false],
  ['update-consumer-offset-oneway', UpdateConsumerOffsetRequestHeader as HeaderCodec<never>, false],
  ['get-consumer-list', GetConsumerListByGroupRequestHeader as HeaderCodec<never>, false],
  ['consumer-send-msg-back', ConsumerSendMsgBackRequestHeader as HeaderCodec<never>, false],
];

for (const version of VECTOR_VERSIONS) {
  const frames = new Map(loadVectors<FrameVector[]>(version, 'frames.json').map((f) => [f.name, f]));

  t.test(`${version}: typed headers read and write Java's ext fields`, async (t) => {
    for (const [name, codec, fast] of CODECS) {
      for (const type of ['json', 'rocketmq']) {
        const v = frames.get(`${name}.${type}`);
        if (!v) {
          t.fail(`missing vector ${name}.${type}`);
          continue;
        }
        const javaPairs = v.fields.extFields;
        const fields = codec.decode(Object.fromEntries(javaPairs));
        const ours = codec.encode(fields);
        const javaValues = new Map(javaPairs);
        for (const [k, val] of Object.entries(ours)) {
          t.equal(val, javaValues.get(k), `${v.name}: ${codec.name}.${k}`);
        }
        const known = new Set(Object.values(codec.keys));
        const javaKnown = javaPairs.map(([k]) => k).filter((k) => known.has(k));
        t.same(
          Object.keys(ours)
            .filter((k) => javaValues.has(k))
            .sort(),
          [...javaKnown].sort(),
          `${v.name}: same set of keys`,
        );
        if (fast && type === 'rocketmq') {
          // MSG_REGION and TRACE_ON are not fields of Java's SendMessageResponseHeader but extFields
          // added beside it, which Java appends after the header's own fields in HashMap order.
          const own = (k: string): boolean => javaValues.has(k) && k !== 'MSG_REGION' && k !== 'TRACE_ON';
          t.same(Object.keys(ours).filter(own), javaKnown.filter(own), `${v.name}: FastCodesHeader field order`);
        }
      }
    }
  });
}

t.test('a long beyond 2^53 is refused by name, not rounded', async (t) => {
  // pull-response-not-found carries nextBeginOffset/maxOffset = 2^53 + 1, which Java accepts.
  for (const version of VECTOR_VERSIONS) {
    for (const type of ['json', 'rocketmq']) {
      const v = loadVectors<FrameVector[]>(version, 'frames.json').find(
        (f) => f.name === `pull-response-not-found.${type}`,
      )!;
      t.equal(Object.fromEntries(v.fields.extFields).nextBeginOffset, '9007199254740993');
      t.throws(
        () => PullMessageResponseHeader.decode(Object.fromEntries(v.fields.extFields)),
        HeaderFieldError,
        `${version} ${type}`,
      );
    }
  }
});
