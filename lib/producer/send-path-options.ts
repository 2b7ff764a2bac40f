import { optionValidator } from '../validate.js';
import { ProducerOptionError } from './errors.js';

// producer-options.ts's check, made here too: that file imports this one
const producerOptionCheck = optionValidator(ProducerOptionError, { range: 'between' });

/**
 * The send-path options of a Producer that a tuned DefaultMQProducer uses: latency fault tolerance,
 * back-pressure of un-awaited sends and automatic batching. Off by default as in Java, except
 * back-pressure (see its option).
 * @category Producing
 */
export interface SendPathOptions {
  /**
   * Latency fault tolerance (Java's `sendLatencyFaultEnable`, ClientConfig's `sendLatencyEnable`): a
   * broker whose send took long or failed is avoided for a while (`latencyMaxMs` →
   * `notAvailableDurationMs`), and queue selection prefers brokers that are not isolated.
   * @default false
   */
  sendLatencyFaultEnable?: boolean;
  /**
   * Latency steps of the fault strategy, ascending, in milliseconds: a send that took at least
   * `latencyMaxMs[i]` (and less than the next step) isolates its broker for `notAvailableDurationMs[i]`.
   * A failed send counts as 10 000 ms.
   * @default [50, 100, 550, 1800, 3000, 5000, 15000] (Java's latencyMax)
   */
  latencyMaxMs?: readonly number[];
  /**
   * How long a broker is avoided after a send in the matching `latencyMaxMs` step, in milliseconds.
   * @default [0, 0, 2000, 5000, 6000, 10000, 30000] (Java's notAvailableDuration)
   */
  notAvailableDurationMs?: readonly number[];
  /**
   * With `sendLatencyFaultEnable`: a broker that refused a connection or timed out is marked
   * unreachable, and a detector probes each faulty broker (GET_MAX_OFFSET of a topic this producer
   * sends to) and marks it reachable again when it answers (Java's `startDetectorEnable`).
   * @default false
   */
  startDetectorEnable?: boolean;
  /**
   * The detector's probe timeout (Java's ClientConfig `detectTimeout`), in milliseconds.
   * @default 200
   */
  detectTimeoutMs?: number;
  /**
   * The least time between two probes of one broker (Java's ClientConfig `detectInterval`), in
   * milliseconds. The detector wakes every 3 s, as Java's.
   * @default 2000
   */
  detectIntervalMs?: number;
  /**
   * Back-pressure (Java's `enableBackpressureForAsyncMode`): `send()` and `sendBatch()` wait for a
   * permit when `backPressureForAsyncSendNum` sends or `backPressureForAsyncSendSize` body bytes are
   * already in flight, instead of queueing without bound; a send that cannot get a permit within its
   * timeout rejects with SendBackpressureTimeoutError. On by default, unlike Java (off): a Node
   * caller's un-awaited sends never block the way Java's async sends block on its executor, and
   * without a limit a burst fills the connection's outbound queue and fails
   * (docs/coming-from-java.md, "Deliberate departures").
   * @default true
   */
  enableBackpressureForAsyncMode?: boolean;
  /**
   * With back-pressure: the most sends in flight at once, at least 10 (Java's floor).
   * @default 10000
   */
  backPressureForAsyncSendNum?: number;
  /**
   * With back-pressure: the most body bytes in flight at once, at least 1 MiB (Java's floor).
   * @default 104857600 (100 MiB)
   */
  backPressureForAsyncSendSize?: number;
  /**
   * Automatic batching (Java's `autoBatch`, ProduceAccumulator): `send()`s to one topic (and queue,
   * when the caller picks one) with the same tags and waitStoreMsgOK are gathered for up to
   * `batchMaxDelayMs` or `batchMaxBytes` and sent as one SEND_BATCH_MESSAGE; each caller's promise
   * settles with its own message's SendResult. Delayed, timer and retry-topic messages, and sends
   * with their own `timeoutMs`, go out alone, as in Java.
   * @default false
   */
  autoBatch?: boolean;
  /**
   * How long the first message of a batch waits for others, 1..30000 ms (Java's `batchMaxDelayMs`).
   * @default 10
   */
  batchMaxDelayMs?: number;
  /**
   * A batch is sent once its bodies exceed this many bytes, 1..2 MiB (Java's `batchMaxBytes`).
   * @default 32768
   */
  batchMaxBytes?: number;
  /**
   * Body bytes held in all batches at once; beyond it a send goes out alone (Java's `totalBatchMaxBytes`).
   * @default 33554432 (32 MiB)
   */
  totalBatchMaxBytes?: number;
}

/** The send-path options with their defaults, checked. */
export type ResolvedSendPathOptions = Required<SendPathOptions>;

const SEND_PATH_KEYS = [
  'sendLatencyFaultEnable',
  'latencyMaxMs',
  'notAvailableDurationMs',
  'startDetectorEnable',
  'detectTimeoutMs',
  'detectIntervalMs',
  'enableBackpressureForAsyncMode',
  'backPressureForAsyncSendNum',
  'backPressureForAsyncSendSize',
  'autoBatch',
  'batchMaxDelayMs',
  'batchMaxBytes',
  'totalBatchMaxBytes',
] as const satisfies readonly (keyof SendPathOptions)[];

const INT_MAX = 2 ** 31 - 1;

function steps(name: string, value: readonly number[] | undefined, def: readonly number[]): readonly number[] {
  if (value === undefined) return def;
  if (!Array.isArray(value) || value.length === 0)
    throw new ProducerOptionError(name, 'must be a non-empty array of milliseconds');
  for (const [i, v] of value.entries()) producerOptionCheck.intIn(`${name}[${i}]`, v, 0, INT_MAX);
  return Object.freeze([...value]);
}

function flag(name: string, value: unknown): boolean {
  return value === undefined ? false : producerOptionCheck.boolean(name, value);
}

/** Splits the send-path options from the rest of a producer's options and resolves them. */
export function takeSendPathOptions<T extends SendPathOptions>(
  options: T,
): { sendPath: ResolvedSendPathOptions; rest: Omit<T, keyof SendPathOptions> } {
  const rest = { ...options } as Record<string, unknown>;
  for (const k of SEND_PATH_KEYS) delete rest[k];
  const o = options;
  const latencyMaxMs = steps('latencyMaxMs', o.latencyMaxMs, [50, 100, 550, 1800, 3000, 5000, 15000]);
  const notAvailableDurationMs = steps(
    'notAvailableDurationMs',
    o.notAvailableDurationMs,
    [0, 0, 2000, 5000, 6000, 10000, 30000],
  );
  if (latencyMaxMs.length !== notAvailableDurationMs.length)
    throw new ProducerOptionError(
      'notAvailableDurationMs',
      `must have as many steps as latencyMaxMs (${latencyMaxMs.length}), not ${notAvailableDurationMs.length}`,
    );
  const int = (name: keyof SendPathOptions, def: number, min: number, max: number) =>
    producerOptionCheck.intIn(name, o[name] ?? def, min, max);
  const sendPath: ResolvedSendPathOptions = {
    sendLatencyFaultEnable: flag('sendLatencyFaultEnable', o.sendLatencyFaultEnable),
    latencyMaxMs,
    notAvailableDurationMs,
    startDetectorEnable: flag('startDetectorEnable', o.startDetectorEnable),
    detectTimeoutMs: int('detectTimeoutMs', 200, 1, INT_MAX),
    detectIntervalMs: int('detectIntervalMs', 2000, 0, INT_MAX),
    enableBackpressureForAsyncMode:
      o.enableBackpressureForAsyncMode === undefined
        ? true
        : producerOptionCheck.boolean('enableBackpressureForAsyncMode', o.enableBackpressureForAsyncMode),
    // Java raises smaller values to these floors; a value below them is refused here so that the
    // limit in force is the one written.
    backPressureForAsyncSendNum: int('backPressureForAsyncSendNum', 10_000, 10, INT_MAX),
    backPressureForAsyncSendSize: int('backPressureForAsyncSendSize', 100 * 1024 * 1024, 1024 * 1024, INT_MAX),
    autoBatch: flag('autoBatch', o.autoBatch),
    batchMaxDelayMs: int('batchMaxDelayMs', 10, 1, 30_000),
    batchMaxBytes: int('batchMaxBytes', 32 * 1024, 1, 2 * 1024 * 1024),
    totalBatchMaxBytes: int('totalBatchMaxBytes', 32 * 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
  };
  return { sendPath, rest: rest as Omit<T, keyof SendPathOptions> };
}
