import { isUtf8 } from 'node:buffer';
import { MQClientInstance } from '../client/index.js';
import {
  PushConsumer,
  type SubscriptionExpression,
  type MessageExt,
  type PushConsumerOptions,
} from '../consumer/index.js';
import { BrokerError } from '../remoting/index.js';
import { ResponseCode } from '../../protocol/index.js';
import { escapeControl, escapeJsonText } from '../capture/format-text.js';
import { consumeLite } from './consume-lite.js';
import { ConsumeReporter } from './consume-reporter.js';
import {
  CliError,
  UsageError,
  intOption,
  namesrvOption,
  parseOptions,
  requiredOption,
  stringOption,
  type CliCommand,
  type CliIO,
} from './common.js';
import { brokerPortHint } from './broker-port-hint.js';
import { CliReplier } from './reply.js';
import { runPopConsume } from './consume-pop.js';
import { clearingWrites, consumeInterrupted, consumeProgress, type ProgressLine } from './progress.js';

/**
 * Ask the name server for the topic's route before consuming, so that an unreachable, silent or
 * garbled name server ends the command with one line instead of a consumer retrying forever.
 * A topic that does not exist yet is fine: the consumer picks it up once it is created.
 */
async function checkNameServer(namesrv: string, topic: string, timeoutMs: number): Promise<void> {
  let instance: MQClientInstance;
  try {
    // logger false: a failure here is the command's one error line
    instance = MQClientInstance.acquire({
      namesrvAddr: namesrv,
      instanceName: `consume-check-${process.pid}`,
      mqClientApiTimeoutMs: timeoutMs,
      connectTimeoutMs: Math.min(timeoutMs, 3000),
      logger: false,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  try {
    await instance.getTopicRoute(topic);
  } catch (err) {
    if (!(err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST)) {
      throw brokerPortHint(err, namesrv) ?? new CliError(((err as Error).message ?? String(err)).split('\n')[0]!);
    }
  } finally {
    await instance.release();
  }
}

const usage = `usage: rocketwire consume [--namesrv ADDR] --topic T --group G [options]

Runs a push consumer and prints every message it receives. Stops after --limit messages, after
--idle-exit seconds without a message, or on SIGTERM / SIGINT; offsets are committed on the way out.
Messages beyond --limit are left unconsumed (their offsets are not committed). On a terminal, a line
on stderr shows how many messages came and the rate (not with --json, nor when stderr is not a
terminal); Ctrl-C prints a summary on stderr and exits 130.

options:
  -n, --namesrv ADDR   name server(s), "host:port[;host:port]" (default: $NAMESRV_ADDR, else
                       $ROCKETWIRE_NAMESRV)
  -t, --topic T        topic to subscribe to
  -g, --group G        consumer group
  --namespace NS       Java's namespace: topic and group are NS%name on the wire
  --expr EXPR          tag expression, e.g. 'TagA || TagB' (default "*")
  --sql EXPR           SQL92 filter on message properties instead, e.g. "a BETWEEN 10 AND 19 AND TAGS = 'x'"
                       (needs a broker with enablePropertyFilter=true)
  --from WHERE         where a group with no committed offset starts: first, last (default) or timestamp:MS
  --broadcast          BROADCASTING model (every consumer gets every message; offsets in a local file)
  --orderly            orderly consumption (one call at a time per queue, broker locks)
  --limit N            stop after N messages
  --idle-exit SECONDS  stop when no message arrived for this long
  --timeout MS         timeout of the requests other than the long poll: name server, heartbeats, the
                       group's consumer list, offsets, the unregistration at exit (default 3000)
  --mode MODE          push (default); lite: a LitePullConsumer polls instead (not with --orderly);
                       pop: POP over remoting (5.x brokers: each printed message is acked; --from first
                       or last only). --reply is a push-mode option
  --invisible-ms MS    with --mode pop: how long a received message stays invisible (default 60000)
  --json               one JSON object per message: topic, brokerName, queueId, queueOffset, msgId, tags,
                       keys, reconsumeTimes, properties, and body (UTF-8) or bodyBase64
  --reply TEXT         answer every message as a request (rocketwire request, DefaultMQProducer#request)
                       with TEXT as the reply's body; {body} in TEXT is replaced by the request's body
  --trace              write SubBefore/SubAfter trace records (Java's format) to RMQ_SYS_TRACE_TOPIC
  --trace-topic T      ... or to topic T (implies --trace)

A broker that refuses connections, does not answer or answers garbage is reported on stderr, one
line naming it, at once and then again after 2, 4, 8 … (at most 60) seconds while it keeps failing.
A stored message that cannot be decoded (say, flagged compressed with a body that does not inflate
or inflates past 64 MiB) is sent back to the group's retry topic (then its DLQ), damaged bytes on
disk are skipped, and one line on stderr says which (queue, offset, reason); the consumer goes on
with the messages after it.

exit status: 0 when stopped as asked (--limit, --idle-exit, SIGTERM); 130 when stopped by Ctrl-C
(SIGINT); 1 when a broker is failing and no pull ever reached it, or when a message was not
consumed as undecodable; 2 for bad usage.
`;

/** One message as a JSON line. */
export function messageToJson(m: MessageExt): string {
  const o: Record<string, unknown> = {
    topic: m.topic,
    brokerName: (m as { brokerName?: string }).brokerName,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    msgId: m.msgId,
    tags: m.tags ?? m.properties.TAGS ?? null,
    keys: m.properties.KEYS ?? null,
    reconsumeTimes: m.reconsumeTimes,
    properties: m.properties,
  };
  if (isUtf8(m.body)) o.body = m.body.toString('utf8');
  else o.bodyBase64 = m.body.toString('base64');
  return JSON.stringify(o);
}

/** One message as a text line; the producer's strings with their control characters escaped, as decode does. */
function messageToText(m: MessageExt): string {
  const body = isUtf8(m.body)
    ? escapeJsonText(JSON.stringify(m.body.toString('utf8')))
    : `base64:${m.body.toString('base64')}`;
  const tags = m.tags ?? m.properties.TAGS;
  const keys = m.properties.KEYS;
  return (
    `${escapeControl(m.topic)} ${(m as { brokerName?: string }).brokerName ?? '?'}/${m.queueId}@${m.queueOffset} msgId=${escapeControl(m.msgId)}` +
    `${tags !== undefined ? ` tags=${escapeControl(tags)}` : ''}${keys !== undefined ? ` keys=${escapeControl(Array.isArray(keys) ? keys.join(' ') : String(keys))}` : ''}` +
    `${m.reconsumeTimes > 0 ? ` reconsumeTimes=${m.reconsumeTimes}` : ''} body=${body}`
  );
}

function parseFrom(v: string | undefined): Pick<PushConsumerOptions, 'consumeFromWhere' | 'consumeTimestampMs'> {
  if (v === undefined || v === 'last') return { consumeFromWhere: 'last' };
  if (v === 'first') return { consumeFromWhere: 'first' };
  const m = /^timestamp:(.*)$/.exec(v);
  if (m) return { consumeFromWhere: 'timestamp', consumeTimestampMs: intOption('from timestamp:MS', m[1], 0, 0) };
  throw new UsageError(`--from must be first, last or timestamp:MS, got "${v}"`);
}

/** --sql or --expr (not both): what the subscription of the topic is. */
function sqlOrTagExpression(sql: string | undefined, expr: string | undefined): SubscriptionExpression {
  if (sql === undefined) return expr ?? '*';
  if (expr !== undefined) throw new UsageError('--sql and --expr exclude each other (a subscription is SQL92 or tags)');
  if (sql.trim() === '') throw new UsageError('--sql must not be empty');
  return { sql };
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    namesrv: { type: 'string' },
    topic: { type: 'string' },
    group: { type: 'string' },
    namespace: { type: 'string' },
    expr: { type: 'string' },
    sql: { type: 'string' },
    from: { type: 'string' },
    broadcast: { type: 'boolean' },
    orderly: { type: 'boolean' },
    limit: { type: 'string' },
    'idle-exit': { type: 'string' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    reply: { type: 'string' },
    trace: { type: 'boolean' },
    'trace-topic': { type: 'string' },
    mode: { type: 'string' },
    'invisible-ms': { type: 'string' },
  });
  const str = (k: string): string | undefined => stringOption(values, k);
  const namesrv = namesrvOption(values);
  const topic = requiredOption(values, 'topic');
  const group = requiredOption(values, 'group');
  const replyText = str('reply');
  if (replyText === '') throw new UsageError('--reply must not be empty');
  let replier: CliReplier | null = null;
  const limit = intOption('limit', str('limit'), 0, 1);
  const idleExitS = intOption('idle-exit', str('idle-exit'), 0, 1, 86_400 * 365);
  const timeoutMs = intOption('timeout', str('timeout'), 3000, 1, 3_600_000);
  const json = values.json === true;
  const orderly = values.orderly === true;
  const mode = str('mode') ?? 'push';
  if (mode !== 'push' && mode !== 'lite' && mode !== 'pop')
    throw new UsageError(`--mode must be push, lite or pop, got "${mode}"`);
  if (mode !== 'push') {
    for (const flag of ['reply'] as const) {
      if (values[flag] !== undefined)
        throw new UsageError(`--${flag} is a push consumer option: not with --mode ${mode}`);
    }
  }
  if (mode === 'lite') {
    if (orderly) throw new UsageError('--orderly is a push consumer mode: not with --mode lite');
    const args = {
      namesrv,
      topic,
      group,
      expr: sqlOrTagExpression(str('sql'), str('expr')),
      namespace: str('namespace'),
      enableTrace: values.trace === true || str('trace-topic') !== undefined,
      traceTopic: str('trace-topic'),
      broadcast: values.broadcast === true,
      limit,
      idleExitS,
      timeoutMs,
      json,
    };
    const format = (m: MessageExt, j: boolean): string => (j ? messageToJson(m) : messageToText(m));
    return consumeLite(
      {
        ...args,
        from: parseFrom(str('from')),
        format,
        checkNameServer: () => checkNameServer(namesrv, topic, timeoutMs),
      },
      io,
    );
  }
  if (mode === 'pop') {
    const check = (): Promise<void> => checkNameServer(namesrv, topic, timeoutMs);
    const filter = sqlOrTagExpression(str('sql'), str('expr'));
    const pop = { namesrv, topic, group, limit, idleExitS, timeoutMs, json, check, filter };
    return runPopConsume(values, io, pop, (m, j) => (j ? messageToJson(m) : messageToText(m)));
  }

  let consumer: PushConsumer<boolean>;
  try {
    consumer = new PushConsumer({
      consumerGroup: group,
      namespace: str('namespace'),
      namesrvAddr: namesrv,
      subscriptions: { [topic]: sqlOrTagExpression(str('sql'), str('expr')) },
      messageModel: values.broadcast === true ? 'BROADCASTING' : 'CLUSTERING',
      orderly,
      mqClientApiTimeoutMs: timeoutMs,
      ...parseFrom(str('from')),
      enableTrace: values.trace === true || str('trace-topic') !== undefined,
      traceTopic: str('trace-topic'),
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }

  let printed = 0;
  let idled = false;
  let lastMessageAt = Date.now();
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  // Messages past the limit are never acknowledged: their calls stay pending, so no offset passes them.
  const never = new Promise<never>(() => undefined);
  const out = io.stdout;
  // One 'drain' wait shared by every handler call that found stdout full (20+ run at once).
  let drained: Promise<void> | null = null;
  const whenDrained = (): Promise<void> =>
    (drained ??= new Promise<void>((resolve) =>
      out.once('drain', () => {
        drained = null;
        resolve();
      }),
    ));
  // The reader went away (consume … | head): stop as if --limit was reached, quietly. Without a
  // listener the EPIPE was an uncaught 'error' event: a stack trace, and no clean shutdown.
  let outputClosed = false;
  const onOutputError = (): void => {
    outputClosed = true;
    finish();
  };
  out.on('error', onOutputError);
  let progress: ProgressLine | null = null;
  const handle = (msgs: MessageExt[]): unknown => {
    if (outputClosed || (limit > 0 && printed >= limit)) return never;
    lastMessageAt = Date.now();
    progress?.clear();
    let ok = true;
    for (const m of msgs) {
      if (limit > 0 && printed >= limit) break;
      ok = out.write((json ? messageToJson(m) : messageToText(m)) + '\n');
      printed++;
    }
    if (limit > 0 && printed >= limit) finish();
    const status = orderly ? 'SUCCESS' : 'CONSUME_SUCCESS';
    if (replier) {
      const r = replier;
      return Promise.all(msgs.map((m) => r.reply(m)))
        .then(() => (ok ? undefined : whenDrained()))
        .then(() => status);
    }
    // Respect stdout backpressure: the call ends when the pipe drained, which throttles pulling.
    if (!ok) return whenDrained().then(() => status);
    return status;
  };

  const reporter = new ConsumeReporter(clearingWrites(io.stderr, () => progress));
  consumer.on('undecodable', (e) => reporter.undecodable(e));
  consumer.on('brokerError', (e) => reporter.brokerError(e));
  consumer.on('brokerReachable', (b) => reporter.brokerReachable(b.brokerName, b.addr, b.request));

  // SIGTERM is a stop as asked (a service manager's); Ctrl-C also gets a summary and exit 130.
  let interrupted = false;
  const onSignal = (): void => finish();
  const onInterrupt = (): void => {
    interrupted = true;
    finish();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onInterrupt);
  let idleTimer: NodeJS.Timeout | undefined;
  let begin = Date.now();
  try {
    await checkNameServer(namesrv, topic, timeoutMs);
    if (replyText !== undefined) replier = await CliReplier.start(namesrv, replyText, timeoutMs, io.stderr);
    await consumer.start(handle as never);
    // The idle window opens once the consumer runs: start-up (name server, heartbeats, the first
    // rebalance) is not idleness, and on a loaded machine it could use up a short --idle-exit
    // before the first pull had even been sent.
    if (printed === 0) lastMessageAt = Date.now();
    begin = Date.now();
    progress = consumeProgress(io.stderr, json, limit, () => printed);
    // This timer also keeps the process alive while the consumer only has unref'd timers (say, a
    // broker that went away and is being retried): a consumer runs until it is told to stop.
    idleTimer = setInterval(
      () => {
        if (idleExitS > 0 && Date.now() - lastMessageAt >= idleExitS * 1000) {
          idled = true;
          finish();
        }
      },
      idleExitS > 0 ? Math.min(1000, idleExitS * 250) : 1000,
    );
    await done;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onInterrupt);
    progress?.stop();
    if (idleTimer) clearInterval(idleTimer);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await consumer.shutdown();
    await replier?.shutdown();
    clearTimeout(force);
  }
  if (idled && limit > 0 && printed < limit) {
    io.stderr.write(
      `rocketwire consume: stopped by --idle-exit ${idleExitS} before --limit ${limit}: ${printed} message${printed === 1 ? '' : 's'} consumed\n`,
    );
  }
  const unreached = reporter.neverReached();
  for (const line of unreached) io.stderr.write(`rocketwire consume: ${line}\n`);
  if (reporter.skipped > 0) {
    io.stderr.write(
      `rocketwire consume: ${reporter.skipped} undecodable message${reporter.skipped === 1 ? ' was' : 's were'} not consumed (see above)\n`,
    );
  }
  if (interrupted) {
    io.stderr.write(consumeInterrupted(printed, topic, Date.now() - begin));
    return 130;
  }
  return unreached.length > 0 || reporter.skipped > 0 ? 1 : 0;
}

export const command: CliCommand = {
  summary: 'run a push consumer and print the messages it receives',
  usage,
  run,
};
