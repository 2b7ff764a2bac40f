import t from 'tap';
import {
  HeaderFieldError,
  OptionError,
  ProtocolError,
  RocketwireError,
  SqlParseError,
  UnsupportedCompressionError,
} from '../../protocol/internal.js';
import {
  AddressError,
  BrokerError,
  RemotingAbortError,
  RemotingBackpressureError,
  RemotingClient,
  RemotingClientClosedError,
  RemotingClosedError,
  RemotingConnectError,
  RemotingError,
  RemotingTimeoutError,
} from '../../lib/remoting/index.js';
import {
  ClientOptionError,
  MQClientError,
  NameServerUnavailableError,
  ResponseFieldError,
  resolveClientOptions,
} from '../../lib/client/index.js';
import {
  MessageValidationError,
  NoRouteError,
  ProducerOptionError,
  RequestTimeoutError,
  SendFailedError,
  resolveProducerOptions,
} from '../../lib/producer/index.js';
import {
  CaptureOptionError,
  FilterSyntaxError,
  FrameFilter,
  HexInputError,
  HexDecoder,
} from '../../lib/capture/index.js';
import { DoctorOptionError } from '../../lib/capture/doctor/index.js';
import { CliError, UsageError } from '../../lib/cli/common.js';
import { ConfigFileError, StorePathError } from '../../lib/broker/index.js';
import {
  ConsumerBrokerError,
  OffsetFileError,
  SqlFilterRefusedError,
  UndecodableMessageError,
} from '../../lib/consumer/index.js';
import { TraceSendError } from '../../lib/trace/index.js';
import { PopNotSupportedError } from '../../lib/consumer/errors.js';
import {
  AdminPermissionError,
  MessageNotFoundError,
  UnknownClusterError,
  UnknownGroupError,
  UnknownTopicError,
} from '../../lib/admin/index.js';

// One hierarchy for the codec, remoting, client, producer, capture and CLI: every class is a
// RocketwireError whose name is a literal that survives bundling.
const cases: [string, Error, (abstract new (...a: never[]) => Error)[]][] = [
  ['ProtocolError', new ProtocolError('m', 3), []],
  ['HeaderFieldError', new HeaderFieldError('offset', 'm'), [ProtocolError]],
  ['UnsupportedCompressionError', new UnsupportedCompressionError('zstd', 0), [ProtocolError]],
  ['OptionError', new OptionError('x', 'm'), []],
  ['SqlParseError', new SqlParseError('a ==', 3, 'm'), []],
  ['RemotingError', new RemotingError('a:1', 'm'), []],
  ['RemotingTimeoutError', new RemotingTimeoutError('a:1', 1, 11, 5, 5), [RemotingError]],
  ['RemotingConnectError', new RemotingConnectError('a:1', 'm'), [RemotingError]],
  ['RemotingClosedError', new RemotingClosedError('a:1', 1, 11, 0), [RemotingError]],
  ['RemotingAbortError', new RemotingAbortError('a:1', 1, 11, 0), [RemotingError]],
  ['RemotingBackpressureError', new RemotingBackpressureError('a:1', 11, 0, 0, 0, 'l'), [RemotingError]],
  ['RemotingClientClosedError', new RemotingClientClosedError('a:1'), []],
  ['AddressError', new AddressError('a', 'is not "host:port"'), []],
  ['BrokerError', new BrokerError(1, null), []],
  ['MQClientError', new MQClientError('m'), []],
  ['NameServerUnavailableError', new NameServerUnavailableError([]), [MQClientError]],
  [
    'ResponseFieldError',
    new ResponseFieldError('offset', 14, 'a:1', { cause: new HeaderFieldError('offset', 'm') }),
    [MQClientError],
  ],
  ['ClientOptionError', new ClientOptionError('x', 'm'), [OptionError]],
  ['ProducerOptionError', new ProducerOptionError('x', 'm'), [OptionError]],
  ['MessageValidationError', new MessageValidationError('topic', 'm'), []],
  ['SendFailedError', new SendFailedError('T', [], 0, false), []],
  ['NoRouteError', new NoRouteError('T', 'm'), []],
  ['RequestTimeoutError', new RequestTimeoutError('T', 'c-1', 3000, true), []],
  ['FilterSyntaxError', new FilterSyntaxError('m'), []],
  ['HexInputError', new HexInputError('m', 0), []],
  ['DoctorOptionError', new DoctorOptionError('slowResponseMs', 'm'), [OptionError]],
  ['CaptureOptionError', new CaptureOptionError('maxFlows', 0, 1), [OptionError]],
  ['CliError', new CliError('m'), []],
  ['UsageError', new UsageError('m'), [CliError]],
  ['ConfigFileError', new ConfigFileError('/d/config/topics.json', 'm'), []],
  ['StorePathError', new StorePathError('/d', '..'), []],
  [
    'UndecodableMessageError',
    new UndecodableMessageError({
      topic: 'T',
      brokerName: 'b',
      queueId: 0,
      queueOffset: 1,
      recordIntact: true,
      bytes: 9,
      reason: 'r',
    }),
    [],
  ],
  ['ConsumerBrokerError', new ConsumerBrokerError('b', 'a:1', 'PULL_MESSAGE', new Error('m')), []],
  ['OffsetFileError', new OffsetFileError('/d/offsets.json', 'm'), []],
  ['TraceSendError', new TraceSendError('RMQ_SYS_TRACE_TOPIC', 'm'), []],
  ['SqlFilterRefusedError', new SqlFilterRefusedError('T', 'a:1', new BrokerError(1, 'r')), []],
  ['PopNotSupportedError', new PopNotSupportedError('a:1', 'proxy'), []],
  ['UnknownTopicError', new UnknownTopicError('T'), []],
  ['UnknownGroupError', new UnknownGroupError('g'), []],
  ['UnknownClusterError', new UnknownClusterError('c'), []],
  ['MessageNotFoundError', new MessageNotFoundError('m'), []],
  ['AdminPermissionError', new AdminPermissionError('UPDATE_AND_CREATE_TOPIC', 'a:1', 'r'), []],
];

t.test('every error class is a RocketwireError with a literal name', async (t) => {
  for (const [name, err, parents] of cases) {
    t.type(err, RocketwireError, `${name} is a RocketwireError`);
    t.equal(err.name, name, `${name}.name`);
    for (const p of parents) t.type(err, p, `${name} is a ${p.name}`);
  }
});

t.test('thrown where they are raised', async (t) => {
  t.throws(() => resolveClientOptions({ namesrvAddr: 'h:1', heartbeatIntervalMs: 0 }), {
    name: 'ClientOptionError',
    option: 'heartbeatIntervalMs',
  });
  t.throws(() => resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g', sendMsgTimeoutMs: 0 }), {
    name: 'ProducerOptionError',
    option: 'sendMsgTimeoutMs',
  });
  t.throws(() => new RemotingClient({ poolSize: 0 }), {
    name: 'OptionError',
    option: 'poolSize',
    message: 'RemotingClient option poolSize must be an integer in [1, 1024], got 0',
  });
  t.throws(() => new FrameFilter(['nope=1']), FilterSyntaxError);
  t.throws(() => new HexDecoder().push(Buffer.from('zz')), HexInputError);
  const closed = new RemotingClient();
  await closed.close();
  t.throws(() => closed.invoke('127.0.0.1:1', { code: 1 } as never), {
    name: 'RemotingClientClosedError',
    addr: '127.0.0.1:1',
    message: 'RemotingClient is closed (call to 127.0.0.1:1)',
  });
});
