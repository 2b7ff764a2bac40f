import type { CompressionType } from '../../protocol/index.js';
import { Producer, type Message, type SendResult } from '../producer/index.js';
import { TransactionRun, transactionMode, type CheckOutcome } from './produce-transaction.js';
import { timerFlags } from './timer-flags.js';
import { ProgressLine, elapsedText } from './progress.js';
import {
  CliError,
  UsageError,
  intOption,
  namesrvOption,
  onInterrupt,
  oneLine,
  parseOptions,
  requiredOption,
  stringOption,
  type CliCommand,
  type CliIO,
} from './common.js';
import { brokerPortHint } from './broker-port-hint.js';

const usage = `usage: rocketwire produce [--namesrv ADDR] --topic T (--count N [--size BYTES] | --body TEXT) [options]

Sends messages and prints a summary: messages sent and failed, and the rate. On a terminal, a line on
stderr shows the progress and the rate while it sends (not with --json, nor when stderr is not a
terminal). Exits non-zero when any send failed; Ctrl-C stops sending, prints the summary so far and
exits 130. An unknown topic is
created by the broker through the TBW102 template (auto-create).

options:
  -n, --namesrv ADDR   name server(s), "host:port[;host:port]" (default: $NAMESRV_ADDR, else
                       $ROCKETWIRE_NAMESRV)
  -t, --topic T        topic to send to
  -c, --count N        number of messages (default 1)
  --size BYTES         body size of generated messages (default 1024; bodies >= 4096 are compressed)
  --compress-type T    codec of compressed bodies: ZLIB (default), LZ4 or ZSTD (ZSTD: Node.js 22.15+ / 23.8+)
  --compress-level N   its level: ZLIB 0..9, ZSTD -131072..22 (default 5); LZ4 has none
  --body TEXT          send TEXT as the body (--count times)
  --tag TAG            tag of every message
  --keys K             key(s) of every message (space-separated)
  --delay-ms N         5.x timer message: delivered N ms after the broker stores it (TIMER_DELAY_MS)
  --deliver-at EPOCH_MS  5.x timer message: delivered at that time (TIMER_DELIVER_MS); a past time at once
  --batch N            messages per SEND_BATCH_MESSAGE (default 1: one SEND_MESSAGE_V2 each)
  --concurrency C      sends in flight at once (default 4)
  -g, --group G        producer group (default rocketwire_produce)
  --namespace NS       Java's namespace: topic and group are sent as NS%name
  --timeout MS         per-send budget, retries included, and name-server timeout (default 3000);
                       at exit the brokers get at most min(MS, 500) ms to acknowledge the unregistration
  --json               print the summary as one JSON object
  --transaction MODE   send each message as a transaction (half message, then END_TRANSACTION):
                       commit, rollback, or check (leave it unknown; the broker's check-back is
                       answered commit for an even sequence number, rollback for an odd one; the
                       sequence number is the message's index in the run, also property "seq")
  --check-timeout S    with --transaction check: wait at most S seconds for every message to be
                       checked (default 120); exits non-zero if some were not
  --trace              write Pub trace records (Java's format) to RMQ_SYS_TRACE_TOPIC
  --trace-topic T      ... or to topic T (implies --trace)
`;

/** Longest wait for the brokers to acknowledge the producer's unregistration at exit. */
const SHUTDOWN_BUDGET_MS = 500;

interface Summary {
  topic: string;
  sent: number;
  failed: number;
  elapsedMs: number;
  msgsPerSec: number;
  bytesPerSec: number;
  msgId?: string;
  offsetMsgId?: string;
  /** A single timer message's recall handle (rocketwire recall). */
  recallHandle?: string;
  queue?: string;
  queueOffset?: number;
  firstError?: string;
  transaction?: Record<string, string | number>;
}

/** --transaction check: wait for the broker's check-backs (Ctrl-C stops waiting). */
async function waitForChecks(tx: TransactionRun, timeoutS: number): Promise<CheckOutcome> {
  const interrupt = onInterrupt();
  try {
    return await tx.waitForChecks(timeoutS * 1000, interrupt.signal);
  } finally {
    interrupt.dispose();
  }
}

/** A body of `size` bytes: printable, varied so that compression is realistic but not trivial. */
function generatedBody(size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  let x = 0x2545f491;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = 0x21 + ((x >>> 0) % 94);
  }
  return b;
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    namesrv: { type: 'string' },
    topic: { type: 'string' },
    count: { type: 'string' },
    size: { type: 'string' },
    body: { type: 'string' },
    tag: { type: 'string' },
    keys: { type: 'string' },
    batch: { type: 'string' },
    'delay-ms': { type: 'string' },
    'deliver-at': { type: 'string' },
    concurrency: { type: 'string' },
    group: { type: 'string' },
    namespace: { type: 'string' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    transaction: { type: 'string' },
    'check-timeout': { type: 'string' },
    trace: { type: 'boolean' },
    'trace-topic': { type: 'string' },
    'compress-type': { type: 'string' },
    'compress-level': { type: 'string' },
  });
  const str = (k: string): string | undefined => stringOption(values, k);
  const namesrv = namesrvOption(values);
  const topic = requiredOption(values, 'topic');
  const text = str('body');
  if (text !== undefined && str('size') !== undefined) throw new UsageError('--body and --size exclude each other');
  const count = intOption('count', str('count'), 1, 1);
  const size = intOption('size', str('size'), 1024, 1, 4 * 1024 * 1024);
  const batch = intOption('batch', str('batch'), 1, 1, 100_000);
  const concurrency = intOption('concurrency', str('concurrency'), 4, 1, 10_000);
  const timeoutMs = intOption('timeout', str('timeout'), 3000, 1, 3_600_000);
  const json = values.json === true;
  const txMode = transactionMode(str('transaction'));
  const checkTimeoutS = intOption('check-timeout', str('check-timeout'), 120, 1, 86_400);
  if (txMode !== 'check' && str('check-timeout') !== undefined)
    throw new UsageError('--check-timeout needs --transaction check');
  if (txMode !== undefined && str('batch') !== undefined)
    throw new UsageError('--batch and --transaction exclude each other: a transaction is one message');
  const body = text !== undefined ? Buffer.from(text, 'utf8') : generatedBody(size);
  if (body.length === 0) throw new UsageError('--body must not be empty');
  const template: Message = { topic, body };
  const tag = str('tag');
  const keys = str('keys');
  if (tag !== undefined) template.tags = tag;
  if (keys !== undefined) template.keys = keys;
  Object.assign(template, timerFlags(str('delay-ms'), str('deliver-at'), batch));

  let producer: Producer;
  let tx: TransactionRun | undefined;
  try {
    const producerOptions = {
      namesrvAddr: namesrv,
      group: str('group') ?? 'rocketwire_produce',
      namespace: str('namespace'),
      sendMsgTimeoutMs: timeoutMs,
      mqClientApiTimeoutMs: timeoutMs,
      connectTimeoutMs: Math.min(timeoutMs, 3000),
      enableTrace: values.trace === true || str('trace-topic') !== undefined,
      traceTopic: str('trace-topic'),
      // checked by the producer (ProducerOptionError → a usage line), as the level's range depends on the codec
      compressType: str('compress-type') as CompressionType | undefined,
      compressLevel:
        str('compress-level') === undefined
          ? undefined
          : intOption('compress-level', str('compress-level'), 5, -131072, 22),
    };
    if (txMode) tx = new TransactionRun(txMode, producerOptions);
    producer = tx ? tx.producer : new Producer(producerOptions);
  } catch (err) {
    throw new UsageError(oneLine(err));
  }

  let exitCode = 0;
  try {
    // Ask for the route first so that an unreachable or broken name server (or a broker's port
    // given as one) is one clear line.
    try {
      await producer.start();
      await producer.fetchPublishMessageQueues(topic);
    } catch (err) {
      throw brokerPortHint(err, namesrv) ?? new CliError(oneLine(err), 1, { cause: err });
    }

    // Ctrl-C / SIGTERM stop issuing sends; the ones in flight finish and the summary is printed.
    const interrupt = onInterrupt();
    let next = 0;
    let sent = 0;
    let failed = 0;
    let firstError: string | undefined;
    let last: SendResult | undefined;
    const begin = process.hrtime.bigint();
    const progress = ProgressLine.start(
      io.stderr,
      json,
      () => sent + failed,
      (rate, ms) => {
        const done = sent + failed;
        return `sent ${sent}${failed > 0 ? ` failed ${failed}` : ''} of ${count} (${Math.floor((done / count) * 100)}%), ${rate} msgs/s, ${elapsedText(ms)}`;
      },
    );
    const worker = async (): Promise<void> => {
      while (next < count && !interrupt.signal.aborted) {
        const n = Math.min(batch, count - next);
        const seq = next;
        next += n;
        try {
          last = tx
            ? await tx.send(template, seq)
            : n === 1 && batch === 1
              ? await producer.send(template)
              : await producer.sendBatch(Array.from({ length: n }, () => template));
          sent += n;
        } catch (err) {
          failed += n;
          firstError ??= oneLine(err);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, Math.ceil(count / batch)) }, () => worker()));
    } finally {
      interrupt.dispose();
      progress?.stop();
    }
    const elapsedMs = Number(process.hrtime.bigint() - begin) / 1e6;
    const checks = tx ? await waitForChecks(tx, checkTimeoutS) : undefined;
    const secs = Math.max(elapsedMs, 0.001) / 1000;
    const summary: Summary = {
      topic,
      sent,
      failed,
      elapsedMs: Math.round(elapsedMs * 10) / 10,
      msgsPerSec: Math.round(sent / secs),
      bytesPerSec: Math.round((sent * body.length) / secs),
    };
    if (count === 1 && last) {
      summary.msgId = last.msgId;
      summary.offsetMsgId = last.offsetMsgId;
      summary.queue = `${last.messageQueue.brokerName}/${last.messageQueue.queueId}`;
      summary.queueOffset = last.queueOffset;
      if (last.recallHandle !== undefined) summary.recallHandle = last.recallHandle;
    }
    if (firstError !== undefined) summary.firstError = firstError;
    if (tx) summary.transaction = { mode: tx.mode, ...tx.producer.transactionStats().ended, ...checks };
    if (json) {
      io.stdout.write(JSON.stringify(summary) + '\n');
    } else {
      const detail = summary.msgId
        ? ` msgId=${summary.msgId} queue=${summary.queue} offset=${summary.queueOffset}` +
          (summary.recallHandle ? ` recallHandle=${summary.recallHandle}` : '')
        : '';
      io.stdout.write(
        `sent ${sent} failed ${failed} to ${topic} in ${(elapsedMs / 1000).toFixed(3)} s: ` +
          `${summary.msgsPerSec} msgs/s, ${(summary.bytesPerSec / 1048576).toFixed(2)} MiB/s${detail}` +
          (checks && tx?.mode === 'check'
            ? `; checked ${checks.checked} (commit ${checks.committed}, rollback ${checks.rolledBack})`
            : '') +
          '\n',
      );
    }
    if (interrupt.signal.aborted) {
      io.stderr.write(`rocketwire produce: interrupted after ${sent + failed} of ${count} messages\n`);
      exitCode = 130;
    } else if (failed > 0) {
      io.stderr.write(`rocketwire produce: ${failed} of ${count} messages failed; first error: ${firstError}\n`);
      exitCode = 1;
    } else if (checks && checks.unchecked > 0) {
      io.stderr.write(
        `rocketwire produce: ${checks.unchecked} of ${sent} messages were not checked by the broker within --check-timeout ${checkTimeoutS}\n`,
      );
      exitCode = 1;
    }
  } finally {
    // Shutdown is bounded: a broker that stopped answering must not keep the command alive. Racing
    // the shutdown was not enough: the command returned, but the UNREGISTER_CLIENT still in flight
    // held its connection, and the process, for another full --timeout (7.8 s for --timeout 3000).
    await producer.shutdown({ timeoutMs: Math.min(timeoutMs, SHUTDOWN_BUDGET_MS) }).catch(() => undefined);
  }
  return exitCode;
}

export const command: CliCommand = {
  summary: 'send messages and report the rate',
  usage,
  run,
};
