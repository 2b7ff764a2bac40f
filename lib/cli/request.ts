import { isUtf8 } from 'node:buffer';
import { Producer, RequestTimeoutError, type Message } from '../producer/index.js';
import type { MessageExt } from '../../protocol/index.js';
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

const usage = `usage: rocketwire request [--namesrv ADDR] --topic T --body TEXT [options]

Sends TEXT as a request (DefaultMQProducer#request: CORRELATION_ID, REPLY_TO_CLIENT, TTL) and prints
the reply a consumer of T sent back through the broker (rocketwire consume --reply, or a Java replier
using MessageUtil.createReplyMessage). Requests go one after another; with --count N a summary with
the median and p99 round trip follows. Exits 1 when a request got no reply within --timeout.

Try it offline:
  rocketwire broker &
  rocketwire consume --namesrv 127.0.0.1:9876 --topic Echo --group echo --reply 're:{body}' &
  rocketwire request --namesrv 127.0.0.1:9876 --topic Echo --body ping

options:
  -n, --namesrv ADDR   name server(s), "host:port[;host:port]" (default: $NAMESRV_ADDR, else
                       $ROCKETWIRE_NAMESRV)
  -t, --topic T        topic of the requests
  --body TEXT          body of every request
  -c, --count N        number of requests, one after another (default 1)
  --timeout MS         how long each request waits for its reply, the send included (default 3000)
  --tag TAG            tag of every request
  --keys K             key(s) of every request (space-separated)
  -g, --group G        producer group (default rocketwire_request)
  --json               one JSON object per reply (correlationId, latencyMs, body or bodyBase64,
                       properties), then the summary as one JSON object
`;

/** Longest wait for the brokers to acknowledge the producer's unregistration at exit. */
const SHUTDOWN_BUDGET_MS = 500;

function bodyText(b: Buffer): { body: string } | { bodyBase64: string } {
  return isUtf8(b) ? { body: b.toString('utf8') } : { bodyBase64: b.toString('base64') };
}

/** Nearest-rank percentile of sorted values. */
function rank(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))]!;
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    namesrv: { type: 'string' },
    topic: { type: 'string' },
    body: { type: 'string' },
    count: { type: 'string' },
    timeout: { type: 'string' },
    tag: { type: 'string' },
    keys: { type: 'string' },
    group: { type: 'string' },
    json: { type: 'boolean' },
  });
  const str = (k: string): string | undefined => stringOption(values, k);
  const namesrv = namesrvOption(values);
  const topic = requiredOption(values, 'topic');
  const text = str('body');
  if (text === undefined) throw new UsageError('--body is required');
  if (text.length === 0) throw new UsageError('--body must not be empty');
  const count = intOption('count', str('count'), 1, 1, 1_000_000);
  const timeoutMs = intOption('timeout', str('timeout'), 3000, 1, 3_600_000);
  const json = values.json === true;
  const template: Message = { topic, body: text };
  const tag = str('tag');
  const keys = str('keys');
  if (tag !== undefined) template.tags = tag;
  if (keys !== undefined) template.keys = keys;

  let producer: Producer;
  try {
    producer = new Producer({
      namesrvAddr: namesrv,
      group: str('group') ?? 'rocketwire_request',
      sendMsgTimeoutMs: timeoutMs,
      mqClientApiTimeoutMs: timeoutMs,
      connectTimeoutMs: Math.min(timeoutMs, 3000),
    });
  } catch (err) {
    throw new UsageError(oneLine(err));
  }
  const out = io.stdout;
  let failed = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  try {
    // Ask for the route first so that an unreachable name server (or a broker's port given as
    // one) or an unknown topic is one clear line.
    try {
      await producer.start();
      await producer.fetchPublishMessageQueues(topic);
    } catch (err) {
      throw brokerPortHint(err, namesrv) ?? new CliError(oneLine(err), 1, { cause: err });
    }
    const interrupt = onInterrupt();
    try {
      for (let i = 0; i < count && !interrupt.signal.aborted; i++) {
        const begin = process.hrtime.bigint();
        let reply: MessageExt;
        try {
          reply = await producer.request(template, timeoutMs);
        } catch (err) {
          failed++;
          firstError ??= oneLine(err);
          io.stderr.write(`rocketwire request: ${oneLine(err)}\n`);
          if (!(err instanceof RequestTimeoutError)) break;
          continue;
        }
        const ms = Number(process.hrtime.bigint() - begin) / 1e6;
        latencies.push(ms);
        const id = reply.properties.CORRELATION_ID ?? '';
        if (json) {
          out.write(
            JSON.stringify({
              correlationId: id,
              latencyMs: Math.round(ms * 100) / 100,
              ...bodyText(reply.body),
              properties: reply.properties,
            }) + '\n',
          );
        } else {
          const b = bodyText(reply.body);
          out.write(
            `reply to ${id} in ${ms.toFixed(2)} ms: ${'body' in b ? `body=${JSON.stringify(b.body)}` : `body=base64:${b.bodyBase64}`}\n`,
          );
        }
      }
    } finally {
      interrupt.dispose();
    }
  } finally {
    await producer.shutdown({ timeoutMs: Math.min(timeoutMs, SHUTDOWN_BUDGET_MS) }).catch(() => undefined);
  }
  if (count > 1 || json) {
    const sorted = [...latencies].sort((a, b) => a - b);
    const r2 = (n: number): number => Math.round(n * 100) / 100;
    const summary = {
      topic,
      replies: latencies.length,
      failed,
      ...(sorted.length > 0
        ? { medianMs: r2(rank(sorted, 0.5)), p99Ms: r2(rank(sorted, 0.99)), maxMs: r2(sorted[sorted.length - 1]!) }
        : {}),
    };
    if (json) out.write(JSON.stringify({ summary }) + '\n');
    else if (sorted.length > 0)
      out.write(
        `${latencies.length} replies, ${failed} failed: median ${summary.medianMs} ms, p99 ${summary.p99Ms} ms, max ${summary.maxMs} ms\n`,
      );
  }
  if (failed > 0) {
    io.stderr.write(`rocketwire request: ${failed} of ${count} requests got no reply; first error: ${firstError}\n`);
    return 1;
  }
  return 0;
}

export const command: CliCommand = {
  summary: 'send requests and print the replies (request–reply)',
  usage,
  run,
};
