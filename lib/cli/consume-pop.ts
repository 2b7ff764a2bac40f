import { SimpleConsumer, type ReceivedMessage } from '../consumer/pop/simple-consumer.js';
import type { SubscriptionExpression } from '../consumer/index.js';
import { UsageError, intOption, stringOption, type CliIO, type OptionValues } from './common.js';
import { consumeInterrupted, consumeProgress, type ProgressLine } from './progress.js';

/**
 * `rocketwire consume --mode pop`: the same output as the push consumer, from a SimpleConsumer
 * (POP over remoting, 5.x brokers). Each printed message is acked; one past --limit is not, so
 * the broker hands it out again after --invisible-ms (as a push consumer leaves it unconsumed).
 */
export async function runPopConsume(
  values: OptionValues,
  io: CliIO,
  o: {
    namesrv: string;
    topic: string;
    group: string;
    limit: number;
    idleExitS: number;
    timeoutMs: number;
    json: boolean;
    check: () => Promise<void>;
    /** --expr or --sql. */
    filter: SubscriptionExpression;
  },
  format: (m: ReceivedMessage, json: boolean) => string,
): Promise<number> {
  if (values.broadcast === true)
    throw new UsageError('--mode pop cannot be --broadcast: the broker shares POP messages among the group');
  if (values.orderly === true) throw new UsageError('--mode pop cannot be --orderly');
  const from = stringOption(values, 'from') ?? 'last';
  if (from !== 'first' && from !== 'last')
    throw new UsageError(`--from must be first or last with --mode pop, got "${from}"`);
  const invisibleMs = intOption('invisible-ms', stringOption(values, 'invisible-ms'), 60_000, 1000, 12 * 3600_000);
  let consumer: SimpleConsumer;
  try {
    consumer = new SimpleConsumer({
      namesrvAddr: o.namesrv,
      consumerGroup: o.group,
      topic: o.topic,
      filterExpression: o.filter,
      ...(stringOption(values, 'namespace') !== undefined ? { namespace: stringOption(values, 'namespace') } : {}),
      enableTrace: values.trace === true || stringOption(values, 'trace-topic') !== undefined,
      ...(stringOption(values, 'trace-topic') !== undefined ? { traceTopic: stringOption(values, 'trace-topic') } : {}),
      initMode: from === 'first' ? 'MIN' : 'MAX',
      invisibleDurationMs: invisibleMs,
      // short polls, so --idle-exit and a signal are seen soon
      awaitDurationMs: 1000,
      ackTimeoutMs: o.timeoutMs,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  await o.check();
  let stop = false;
  let idled = false;
  let interrupted = false;
  const onSignal = (): void => {
    stop = true;
  };
  const onInterrupt = (): void => {
    interrupted = true;
    stop = true;
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onInterrupt);
  io.stdout.on('error', onSignal);
  let printed = 0;
  let progress: ProgressLine | null = null;
  let begin = Date.now();
  try {
    await consumer.start();
    let lastMessageAt = Date.now();
    begin = lastMessageAt;
    progress = consumeProgress(io.stderr, o.json, o.limit, () => printed);
    while (!stop && (o.limit === 0 || printed < o.limit)) {
      const msgs = await consumer.receive(32, invisibleMs);
      if (msgs.length > 0) lastMessageAt = Date.now();
      const done: ReceivedMessage[] = [];
      if (msgs.length > 0) progress?.clear();
      for (const m of msgs) {
        if (o.limit > 0 && printed >= o.limit) break;
        if (!io.stdout.write(format(m, o.json) + '\n')) await new Promise((r) => io.stdout.once('drain', r));
        printed++;
        done.push(m);
      }
      if (done.length > 0) await consumer.ack(done);
      if (o.idleExitS > 0 && Date.now() - lastMessageAt >= o.idleExitS * 1000) {
        idled = true;
        break;
      }
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onInterrupt);
    progress?.stop();
    await consumer.shutdown();
  }
  if (idled && o.limit > 0 && printed < o.limit) {
    io.stderr.write(
      `rocketwire consume: stopped by --idle-exit ${o.idleExitS} before --limit ${o.limit}: ${printed} message${printed === 1 ? '' : 's'} consumed\n`,
    );
  }
  if (interrupted) {
    io.stderr.write(consumeInterrupted(printed, o.topic, Date.now() - begin));
    return 130;
  }
  return 0;
}
