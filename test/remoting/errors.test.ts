import t from 'tap';
import { ProtocolError, ResponseCode, RocketwireError, createRequest, createResponse } from '../../protocol/index.js';
import { parseDelayLevels } from '../../protocol/internal.js';
import { PushConsumer, allocateConsistentHash } from '../../lib/consumer/index.js';
import {
  BrokerError,
  RemotingClosedError,
  RemotingError,
  RemotingTimeoutError,
  brokerErrorFromResponse,
  checkResponse,
  formatAddress,
  isRetriableResponseCode,
  parseAddress,
} from '../../lib/remoting/index.js';

t.test('checkResponse passes SUCCESS and turns anything else into a BrokerError', async (t) => {
  const req = createRequest(10);
  const ok = createResponse(req, ResponseCode.SUCCESS);
  t.equal(checkResponse(ok), ok);
  const notFound = createResponse(req, ResponseCode.PULL_NOT_FOUND);
  t.equal(checkResponse(notFound, { accept: [ResponseCode.PULL_NOT_FOUND] }), notFound);
  const busy = createResponse(req, ResponseCode.SYSTEM_BUSY, { remark: '[REJECTREQUEST]system busy' });
  const err = t.throws(() => checkResponse(busy, { addr: '10.0.0.1:10911', requestCode: 10 })) as BrokerError;
  t.type(err, BrokerError);
  t.equal(err.code, ResponseCode.SYSTEM_BUSY);
  t.equal(err.remark, '[REJECTREQUEST]system busy');
  t.equal(err.retriable, true);
  t.equal(err.addr, '10.0.0.1:10911');
  t.equal(err.requestCode, 10);
  t.match(err.message, 'SEND_MESSAGE failed from 10.0.0.1:10911: SYSTEM_BUSY (2): [REJECTREQUEST]system busy');
  const denied = brokerErrorFromResponse(createResponse(req, ResponseCode.SUBSCRIPTION_NOT_EXIST));
  t.equal(denied.retriable, false);
  t.equal(isRetriableResponseCode(ResponseCode.TOPIC_NOT_EXIST), true);
  t.equal(isRetriableResponseCode(ResponseCode.MESSAGE_ILLEGAL), false);
});

t.test('remoting errors carry machine-readable fields and name the address', async (t) => {
  const timeout = new RemotingTimeoutError('127.0.0.1:9876', 42, 105, 3001.4, 3000);
  t.ok(timeout instanceof RemotingError);
  t.equal(timeout.name, 'RemotingTimeoutError');
  t.same([timeout.addr, timeout.opaque, timeout.code, timeout.timeoutMs], ['127.0.0.1:9876', 42, 105, 3000]);
  t.match(timeout.message, 'GET_ROUTEINFO_BY_TOPIC (code 105, opaque 42) to 127.0.0.1:9876 timed out after 3001 ms');
  const corrupt = new RemotingClosedError('h:1', 7, 11, 5, {
    cause: new ProtocolError('unknown serialize type 9', 12),
  });
  t.match(corrupt.message, 'connection to h:1 closed while PULL_MESSAGE (code 11, opaque 7) was in flight');
  t.match(corrupt.message, 'corrupt frame: unknown serialize type 9');
});

t.test('addresses: host:port and [v6]:port', async (t) => {
  t.same(parseAddress('127.0.0.1:10911'), { host: '127.0.0.1', port: 10911 });
  t.same(parseAddress(' broker-a.local:9876 '), { host: 'broker-a.local', port: 9876 });
  t.same(parseAddress('[::1]:10911'), { host: '::1', port: 10911 });
  t.throws(() => parseAddress('nohost'), /host:port/);
  t.throws(() => parseAddress('h:0'), /port/);
  t.throws(() => parseAddress('h:99999'), /port/);
  t.throws(() => parseAddress('[::1]10911'), /v6/);
  t.throws(
    () => parseAddress('nohost'),
    { name: 'AddressError', addr: 'nohost' },
    'a RocketwireError naming the address',
  );
  t.equal(formatAddress('::ffff:127.0.0.1', 5), '127.0.0.1:5');
  t.equal(formatAddress('::1', 5), '[::1]:5');
});

t.test(
  'argument checks of lib/ and protocol/ are RocketwireErrors naming what was wrong, not built-in RangeError/TypeError',
  async (t) => {
    const caught = (fn: () => unknown): unknown => {
      try {
        fn();
      } catch (err) {
        return err;
      }
      return null;
    };
    t.ok(caught(() => parseAddress('h:0')) instanceof RocketwireError);
    t.throws(() => parseDelayLevels('1s 2x'), { name: 'OptionError', option: 'messageDelayLevel' });
    for (const blank of ['', '   '])
      t.throws(
        () => parseDelayLevels(blank),
        { name: 'OptionError', option: 'messageDelayLevel', message: /messageDelayLevel is empty/ },
        `${JSON.stringify(blank)} is empty, not unparsable`,
      );
    t.ok(caught(() => parseDelayLevels('1s 2x')) instanceof RocketwireError);
    t.throws(() => allocateConsistentHash(-1), { name: 'ConsumerOptionError', option: 'virtualNodeCnt' });
    const consumer = new PushConsumer({ consumerGroup: 'cg', namesrvAddr: '127.0.0.1:9876' });
    t.throws(() => consumer.subscribe(''), { name: 'ConsumerOptionError', option: 'topic' });
  },
);

t.test("a proxy's refusal of an auto-created topic says what to do", async (t) => {
  // The 5.5.0 proxy's exact answer to SEND_MESSAGE_V2 on a topic without +message.type=NORMAL.
  const remark = 'TopicMessageType validate failed, the expected type is UNSPECIFIED, but actual type is NORMAL';
  const err = brokerErrorFromResponse(
    { code: ResponseCode.MESSAGE_ILLEGAL, remark },
    { addr: '192.0.2.2:8081', requestCode: 310 },
  );
  t.equal(err.remark, remark, 'the remark is kept as sent');
  t.match(err.message, '192.0.2.2:8081');
  t.match(err.message, '+message.type=NORMAL', 'the message names the attribute to set');
  t.notMatch(
    brokerErrorFromResponse({ code: ResponseCode.MESSAGE_ILLEGAL, remark: 'the message body size over max value' })
      .message,
    'message.type',
    'other MESSAGE_ILLEGAL answers get no hint',
  );
  t.notMatch(
    brokerErrorFromResponse({
      code: ResponseCode.MESSAGE_ILLEGAL,
      remark: 'TopicMessageType validate failed, the expected type is FIFO, but actual type is NORMAL',
    }).message,
    'message.type=NORMAL',
    'a FIFO topic is not to be turned into a NORMAL one',
  );
});
