import { GROUP_MAX_LENGTH } from '../../protocol/internal.js';
import { resolveClientOptions, type ClientOptions } from '../client/index.js';
import { checkTraceOptions, type TraceOptions } from '../trace/trace-hooks.js';
import { checkMetricsOptions, type MetricsOption } from '../metrics/meter.js';
import { checkTracingOptions, type TracingOption, type TracingOptions } from '../metrics/tracing.js';
import { optionValidator } from '../validate.js';
import type { CompressionType } from '../../protocol/internal.js';
import { resolveCompression } from './compression-options.js';
import { ProducerOptionError } from './errors.js';
import { takeSendPathOptions, type SendPathOptions } from './send-path-options.js';

/**
 * Options of a Producer; client connection options (namesrvAddr, acl, tls, …) are accepted too.
 * @category Producing
 */
export interface ProducerOptions extends ClientOptions, TraceOptions, MetricsOption, TracingOption, SendPathOptions {
  /** Producer group (required; not "DEFAULT_PRODUCER"). */
  group: string;
  /**
   * Budget of one send() including retries, in milliseconds.
   * @default 3000
   */
  sendMsgTimeoutMs?: number;
  /**
   * Extra attempts of a sync send after a failure, on another broker when there is one, 0..100.
   * @default 2
   */
  retryTimesWhenSendFailed?: number;
  /**
   * Bodies of at least this many bytes are compressed with `compressType` (single sends only: Java
   * never compresses a batch). Java's option name, kept so that DefaultMQProducer users find it;
   * the unit is bytes.
   * @default 4096
   */
  compressMsgBodyOverHowmuch?: number;
  /**
   * Codec of compressed bodies: `ZLIB`, `LZ4` or `ZSTD` (any case, as Java's CompressionType.of).
   * ZSTD needs Node.js 22.15 / 23.8 or later (node:zlib's zstd); on an older runtime the
   * constructor throws ProducerOptionError{option: 'compressType'}.
   * @default "ZLIB" (Java's rocketmq.message.compressType)
   */
  compressType?: CompressionType;
  /**
   * Level of compressed bodies: 0..9 for ZLIB, -131072..22 for ZSTD; LZ4 has no level (ignored, as in Java).
   * @default 5 (Java's rocketmq.message.compressLevel)
   */
  compressLevel?: number;
  /**
   * Largest body (or batch body) accepted, in bytes (Java's maxMessageSize).
   * @default 4194304 (4 MiB)
   */
  maxMessageSize?: number;
  /**
   * Template topic for auto-creation.
   * @default "TBW102"
   */
  createTopicKey?: string;
  /**
   * Queue count of auto-created topics, 1..1024.
   * @default 4
   */
  defaultTopicQueueNums?: number;
  /**
   * Use SEND_MESSAGE (10, long header keys) instead of SEND_MESSAGE_V2 (310).
   * @default false
   */
  sendMessageV1?: boolean;
}

export type ResolvedProducerOptions = Required<
  Omit<ProducerOptions, keyof ClientOptions | 'traceTopic' | 'metrics' | 'tracing'>
> & { client: ClientOptions; traceTopic: string | undefined; tracing: TracingOptions | undefined };

/** The producer's option checks (ProducerOptionError "option <name>: must be an integer between …"). */
export const producerOptionCheck = optionValidator(ProducerOptionError, { range: 'between' });

function int(name: string, value: number | undefined, def: number, min: number, max: number): number {
  return producerOptionCheck.intIn(name, value ?? def, min, max);
}

/** The defaults of DefaultMQProducer (docs/protocol-facts.md#what-a-producer-sends), in a fresh object, validated. */
export function resolveProducerOptions(options: ProducerOptions): ResolvedProducerOptions {
  // Validators.checkGroup (develop: at most 120 characters), the rule the broker applies too
  const group = producerOptionCheck.groupName('group', options.group, {
    missing: 'is required',
    tooLong: `is longer than ${GROUP_MAX_LENGTH} characters`,
    illegal: (g) => `"${g}" may only contain letters, digits, %, |, _ and -`,
    reserved: { name: 'DEFAULT_PRODUCER', message: 'DEFAULT_PRODUCER is reserved for the client itself' },
  });
  const {
    group: _group,
    sendMsgTimeoutMs,
    retryTimesWhenSendFailed,
    compressMsgBodyOverHowmuch,
    compressType,
    compressLevel,
    maxMessageSize,
    createTopicKey,
    defaultTopicQueueNums,
    sendMessageV1,
    enableTrace,
    traceTopic,
    metrics,
    tracing,
    ...others
  } = options;
  const { sendPath, rest: client } = takeSendPathOptions(others);
  const badTracing = checkTracingOptions(tracing);
  if (badTracing) throw new ProducerOptionError(badTracing.option, badTracing.message);
  const badMetrics = checkMetricsOptions(metrics);
  if (badMetrics) throw new ProducerOptionError(badMetrics.option, badMetrics.message);
  const badTrace = checkTraceOptions({ enableTrace, traceTopic });
  if (badTrace) throw new ProducerOptionError(badTrace.option, badTrace.message);
  // Connection options are checked here too, so that a bad address fails at construction, not at start().
  resolveClientOptions(client);
  return {
    group,
    sendMsgTimeoutMs: int('sendMsgTimeoutMs', sendMsgTimeoutMs, 3000, 1, 3_600_000),
    retryTimesWhenSendFailed: int('retryTimesWhenSendFailed', retryTimesWhenSendFailed, 2, 0, 100),
    compressMsgBodyOverHowmuch: int('compressMsgBodyOverHowmuch', compressMsgBodyOverHowmuch, 4096, 0, 2 ** 31 - 1),
    ...resolveCompression(producerOptionCheck, compressType, compressLevel),
    maxMessageSize: int('maxMessageSize', maxMessageSize, 4 * 1024 * 1024, 1, 16 * 1024 * 1024 - 1024),
    createTopicKey: createTopicKey ?? 'TBW102',
    defaultTopicQueueNums: int('defaultTopicQueueNums', defaultTopicQueueNums, 4, 1, 1024),
    sendMessageV1: sendMessageV1 ?? false,
    enableTrace: enableTrace ?? false,
    traceTopic,
    tracing,
    ...sendPath,
    client,
  };
}
