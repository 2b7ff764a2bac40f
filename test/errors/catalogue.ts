// Every error class of lib/ and protocol/, found in the sources (so a new class cannot hide from the
// tests), with one instance of each built by `SAMPLES` and the retriable value docs/errors.md
// promises for it. errors.test.ts checks the classes; docs-table.test.ts checks the table against
// them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../api/api-report.js';
import type { RocketwireError } from '../../protocol/errors.js';
import { ResponseCode } from '../../protocol/internal.js';
import { BrokerError, RemotingTimeoutError } from '../../lib/remoting/index.js';

export const root = repoRoot();

export interface ErrorClassInfo {
  name: string;
  /** The class it extends, as written in the source. */
  parent: string;
  /** Source file, relative to the repository root. */
  file: string;
  ctor: new (...args: never[]) => RocketwireError;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(rel));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** `export class X extends Y` of every source file of lib/ and protocol/ whose chain reaches RocketwireError (the root included). */
export async function errorClasses(): Promise<ErrorClassInfo[]> {
  const declared = new Map<string, { parent: string; file: string }>();
  for (const file of [...sourceFiles('protocol'), ...sourceFiles('lib')]) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const m of text.matchAll(/^export class (\w+) extends (\w+)/gm)) declared.set(m[1]!, { parent: m[2]!, file });
  }
  const isError = (name: string): boolean => {
    for (let n: string | undefined = name, guard = 0; n !== undefined && guard < 20; guard++) {
      if (n === 'RocketwireError') return true;
      n = declared.get(n)?.parent;
    }
    return false;
  };
  const result: ErrorClassInfo[] = [];
  for (const [name, { parent, file }] of declared) {
    if (!isError(name)) continue;
    const built = path.join(root, 'dist', file.replace(/\.ts$/, '.js'));
    const mod = (await import(pathToFileURL(built).href)) as Record<string, unknown>;
    result.push({ name, parent, file, ctor: mod[name] as ErrorClassInfo['ctor'] });
  }
  return result.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Classes whose retriable is decided per error (docs/errors.md gives the rule instead of yes/no);
 * `RULE_CASES` builds instances on both sides of the rule.
 */
export const RULE_CLASSES = new Set([
  'BrokerError',
  'SendFailedError',
  'ConsumerBrokerError',
  'SqlFilterRefusedError',
  'TraceSendError',
]);

/** Codes two classes share on purpose: none so far. */
export const SHARED_CODES: ReadonlyMap<string, readonly string[]> = new Map();

type Args = unknown[];
const timeout = (): RemotingTimeoutError => new RemotingTimeoutError('127.0.0.1:10911', 1, 11, 3001, 3000);
const denied = (): BrokerError =>
  new BrokerError(ResponseCode.SUBSCRIPTION_NOT_EXIST, 'no subscription', { addr: '127.0.0.1:10911' });

/** Constructor arguments of one ordinary instance of each class, and its expected retriable. */
export const SAMPLES: Record<string, { args: () => Args; retriable: boolean }> = {
  RocketwireError: { args: () => ['m'], retriable: false },
  OptionError: { args: () => ['o', 'm'], retriable: false },
  ClientOptionError: { args: () => ['o', 'm'], retriable: false },
  ProducerOptionError: { args: () => ['o', 'm'], retriable: false },
  ConsumerOptionError: { args: () => ['o', 'm'], retriable: false },
  BrokerOptionError: { args: () => ['o', 'm'], retriable: false },
  TestClusterOptionError: { args: () => ['advance', 'm'], retriable: false },
  WaitTimeoutError: { args: () => ['the message', 5000], retriable: false },
  DoctorOptionError: { args: () => ['o', 'm'], retriable: false },
  CaptureOptionError: { args: () => ['maxFlows', 0, 1], retriable: false },
  ProtocolError: { args: () => ['m', 0], retriable: false },
  HeaderFieldError: { args: () => ['f', 'm'], retriable: false },
  UnsupportedCompressionError: { args: () => ['C', 0], retriable: false },
  InflatedBodyTooLargeError: { args: () => ['ZLIB', 1024, 0], retriable: false },
  FilterExpressionError: { args: () => ['m'], retriable: false },
  SqlParseError: { args: () => ['a >', 3, 'm'], retriable: false },
  SqlLimitError: { args: () => ['a = 1 OR b = 2', 10, 'maxLength', 10, 14, 'sqlMaxLength'], retriable: false },
  RemotingError: { args: () => ['h:1', 'm'], retriable: true },
  RemotingTimeoutError: { args: () => ['h:1', 1, 11, 3001, 3000], retriable: true },
  RemotingConnectError: { args: () => ['h:1', 'refused'], retriable: true },
  RemotingClosedError: { args: () => ['h:1', 1, 11, 5], retriable: true },
  RemotingAbortError: { args: () => ['h:1', 1, 11, 5], retriable: false },
  RemotingBackpressureError: { args: () => ['h:1', 10, 100, 2, 50, '100 bytes'], retriable: true },
  RemotingClientClosedError: { args: () => ['h:1'], retriable: false },
  RemotingUnmatchedResponsesError: { args: () => ['h:1', 1000, -5, 0], retriable: true },
  PropertiesLimitError: { args: () => [16384, 80000], retriable: false },
  AddressError: { args: () => ['h', 'is not "host:port"'], retriable: false },
  BrokerError: { args: () => [ResponseCode.SYSTEM_BUSY, 'busy'], retriable: true },
  MQClientError: { args: () => ['m'], retriable: false },
  ClientStateError: { args: () => ['CREATED', 'm'], retriable: false },
  ProducerStateError: { args: () => ['CREATED', 'm'], retriable: false },
  ConsumerStateError: { args: () => ['CREATED', 'm'], retriable: false },
  AddressServerError: {
    args: () => ['http://ns.example:8080/rocketmq/nsaddr', 'answered HTTP 503', { status: 503 }],
    retriable: true,
  },
  NameServerUnavailableError: { args: () => [[{ addr: 'h:9876', error: new Error('ECONNREFUSED') }]], retriable: true },
  ResponseFieldError: { args: () => ['offset', 14, 'h:1', { cause: new Error('not a long') }], retriable: false },
  RouteLimitError: {
    args: () => [
      {
        addr: 'h:9876',
        topic: 'T',
        field: 'queueDatas[0].readQueueNums',
        value: 2 ** 31,
        limit: 131072,
        option: 'maxRouteQueues',
      },
    ],
    retriable: false,
  },
  PullOffsetError: {
    args: () => [
      {
        addr: 'h:1',
        topic: 'T',
        queueId: 0,
        field: 'nextBeginOffset',
        value: -1,
        requestOffset: 4,
        why: 'is negative',
      },
    ],
    retriable: true,
  },
  BrokerRequestRefusedError: {
    args: () => [{ addr: 'h:1', requestCode: 220, field: 'offsetTable[T@b@0]', value: -1, why: 'is not an offset' }],
    retriable: false,
  },
  SendFailedError: {
    args: () => ['T', [{ brokerName: 'b', queueId: 0, error: timeout() }], 3000, true],
    retriable: true,
  },
  NoRouteError: { args: () => ['T', 'no route yet'], retriable: true },
  MessageValidationError: { args: () => ['topic', 'm'], retriable: false },
  RequestTimeoutError: { args: () => ['T', 'c-1', 3000, true], retriable: true },
  SendBackpressureTimeoutError: { args: () => ['T', 'backPressureForAsyncSendNum', 10000, 3000], retriable: true },
  ConsumerBrokerError: { args: () => ['b', 'h:1', 'PULL_MESSAGE', timeout()], retriable: true },
  BrokerAddressNotFoundError: { args: () => ['b'], retriable: true },
  NoRetryQueueError: { args: () => ['%RETRY%g'], retriable: true },
  SendBackFailedError: { args: () => ['id'], retriable: true },
  OffsetFileError: { args: () => ['/tmp/o.json', 'unreadable'], retriable: false },
  UndecodableMessageError: {
    args: () => [
      { topic: 'T', brokerName: 'b', queueId: 0, queueOffset: 3, recordIntact: true, bytes: 10, reason: 'bad' },
    ],
    retriable: false,
  },
  SqlFilterRefusedError: {
    args: () => [
      'T',
      'h:1',
      new BrokerError(ResponseCode.SYSTEM_ERROR, 'The broker does not support consumer to filter message by SQL92'),
    ],
    retriable: false,
  },
  PopNotSupportedError: { args: () => ['h:1', 'proxy'], retriable: false },
  TraceSendError: { args: () => ['RMQ_SYS_TRACE_TOPIC', 'no writable queue'], retriable: false },
  UnknownTopicError: { args: () => ['T'], retriable: false },
  UnknownGroupError: { args: () => ['g'], retriable: false },
  MessageNotFoundError: { args: () => ['key k'], retriable: false },
  AdminPermissionError: { args: () => ['createTopic', 'h:1', null], retriable: false },
  UnknownClusterError: { args: () => ['C'], retriable: false },
  StaticTopicError: { args: () => ['T', 'a static topic cannot shrink (2 < 4)'], retriable: false },
  UnknownProducerGroupError: { args: () => ['pg'], retriable: false },
  AdminArgumentError: { args: () => ['perm', 'must be 0..7, got 9'], retriable: false },
  StoreWriteError: { args: () => ['m', { code: 'ENOSPC' }], retriable: false },
  NotAFolderError: { args: () => ['/tmp/x'], retriable: false },
  ChannelExpiredError: { args: () => ['g', 'c', 120000], retriable: true },
  ConfigFileError: { args: () => ['topics.json', 'bad JSON'], retriable: false },
  StorePathError: { args: () => ['/store', '..'], retriable: false },
  StoreFileFormatError: { args: () => ['no topicConfigTable object'], retriable: false },
  AddressPatternError: { args: () => ['10.0.0.*.1', 'an IPv4 range has four parts'], retriable: false },
  YamlSubsetError: { args: () => [3, 'tabs are not allowed in indentation'], retriable: false },
  RequestAccessParseError: { args: () => ['the heartbeat body cannot be read'], retriable: false },
  AuthMetadataError: { args: () => ['The user is existed'], retriable: false },
  AclConfigError: {
    args: () => ['must be longer than 6 characters', { file: 'plain_acl.yml', field: 'accounts[0].accessKey' }],
    retriable: false,
  },
  FilterSyntaxError: { args: () => ['m'], retriable: false },
  CaptureStateError: { args: () => ['m'], retriable: false },
  HexInputError: { args: () => ['m', 0], retriable: false },
  CaptureWorkerError: { args: () => [1], retriable: false },
  CliError: { args: () => ['m'], retriable: false },
  UsageError: { args: () => ['m'], retriable: false },
};

/** The other side of each rule: [class, constructor arguments, expected retriable, what it shows]. */
export const RULE_CASES: Array<[string, () => Args, boolean, string]> = [
  [
    'BrokerError',
    () => [ResponseCode.SUBSCRIPTION_NOT_EXIST, null],
    false,
    'a response code outside the retriable set',
  ],
  ['BrokerError', () => [ResponseCode.TOPIC_NOT_EXIST, null], true, 'TOPIC_NOT_EXIST: no route yet'],
  ['BrokerError', () => [ResponseCode.FLOW_CONTROL, null], true, 'FLOW_CONTROL'],
  ['BrokerError', () => [ResponseCode.SYSTEM_BUSY, null, { retriable: false }], false, 'the caller knows better'],
  [
    'SendFailedError',
    () => ['T', [{ brokerName: 'b', queueId: 0, error: denied() }], 10, false],
    false,
    'last attempt not retriable',
  ],
  ['SendFailedError', () => ['T', [], 3000, true], true, 'time budget used up before any attempt'],
  ['ConsumerBrokerError', () => ['b', 'h:1', 'PULL_MESSAGE', denied()], false, 'a refusal'],
  [
    'ConsumerBrokerError',
    () => ['b', 'h:1', 'PULL_MESSAGE', new Error('plain')],
    false,
    'a cause that is not a RocketwireError',
  ],
  ['SqlFilterRefusedError', () => ['T', 'h:1', timeout()], true, 'the broker could not be asked (timeout)'],
  ['TraceSendError', () => ['RMQ_SYS_TRACE_TOPIC', 'send failed', { cause: timeout() }], true, 'a retriable cause'],
];
