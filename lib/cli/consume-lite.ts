// `rocketwire consume --mode lite`: the same command with a LitePullConsumer in a poll loop instead
// of the push consumer. Only what poll() returned and was printed is committed (autoCommit off, an
// explicit commit per batch), so messages past --limit stay uncommitted, as with the push consumer.
import {
  LitePullConsumer,
  messageQueue,
  type LitePullConsumerOptions,
  type MessageExt,
  type SubscriptionExpression,
} from '../consumer/index.js';
import { CliError, UsageError, type CliIO } from './common.js';
import { ConsumeReporter } from './consume-reporter.js';
import { clearingWrites, consumeInterrupted, consumeProgress, type ProgressLine } from './progress.js';

export interface LiteConsumeArgs {
  namesrv: string;
  topic: string;
  group: string;
  expr: SubscriptionExpression;
  namespace: string | undefined;
  enableTrace: boolean;
  traceTopic: string | undefined;
  broadcast: boolean;
  limit: number;
  idleExitS: number;
  timeoutMs: number;
  json: boolean;
  from: Pick<LitePullConsumerOptions, 'consumeFromWhere' | 'consumeTimestampMs'>;
  format: (m: MessageExt, json: boolean) => string;
  checkNameServer: () => Promise<void>;
}

export async function consumeLite(a: LiteConsumeArgs, io: CliIO): Promise<number> {
  let consumer: LitePullConsumer;
  try {
    consumer = new LitePullConsumer({
      consumerGroup: a.group,
      namesrvAddr: a.namesrv,
      subscriptions: { [a.topic]: a.expr },
      ...(a.namespace !== undefined ? { namespace: a.namespace } : {}),
      enableTrace: a.enableTrace,
      ...(a.traceTopic !== undefined ? { traceTopic: a.traceTopic } : {}),
      messageModel: a.broadcast ? 'BROADCASTING' : 'CLUSTERING',
      autoCommit: false,
      mqClientApiTimeoutMs: a.timeoutMs,
      ...a.from,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let progress: ProgressLine | null = null;
  const reporter = new ConsumeReporter(clearingWrites(io.stderr, () => progress));
  consumer.on('brokerError', (e) => reporter.brokerError(e));
  consumer.on('brokerReachable', (b) => reporter.brokerReachable(b.brokerName, b.addr, b.request));
  consumer.on('undecodable', (e) => reporter.undecodable(e));
  let stop = false;
  let interrupted = false;
  let outputClosed = false;
  const onSignal = (): void => {
    stop = true;
  };
  const onInterrupt = (): void => {
    interrupted = true;
    stop = true;
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onInterrupt);
  const out = io.stdout;
  const onOutputError = (): void => {
    outputClosed = true;
    stop = true;
  };
  out.on('error', onOutputError);
  let printed = 0;
  let idled = false;
  let begin = Date.now();
  try {
    await a.checkNameServer();
    await consumer.start();
    let lastMessageAt = Date.now();
    begin = lastMessageAt;
    progress = consumeProgress(io.stderr, a.json, a.limit, () => printed);
    while (!stop && !(a.limit > 0 && printed >= a.limit)) {
      const msgs = await consumer.poll(Math.min(1000, a.idleExitS > 0 ? a.idleExitS * 250 : 1000));
      const done = new Map<string, [ReturnType<typeof messageQueue>, number]>();
      if (msgs.length > 0) progress?.clear();
      for (const m of msgs) {
        if (outputClosed || (a.limit > 0 && printed >= a.limit)) break;
        const ok = out.write(a.format(m, a.json) + '\n');
        printed++;
        const mq = messageQueue(m.topic, m.brokerName!, m.queueId);
        done.set(`${mq.brokerName}/${mq.queueId}`, [mq, m.queueOffset + 1]);
        if (!ok) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      }
      if (done.size > 0) await consumer.commit(done.values());
      if (msgs.length > 0) lastMessageAt = Date.now();
      else if (a.idleExitS > 0 && Date.now() - lastMessageAt >= a.idleExitS * 1000) {
        idled = true;
        break;
      }
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof CliError) throw err;
    throw new CliError(((err as Error).message ?? String(err)).split('\n')[0]!);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onInterrupt);
    progress?.stop();
    out.off('error', onOutputError);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await consumer.shutdown();
    clearTimeout(force);
  }
  if (idled && a.limit > 0 && printed < a.limit) {
    io.stderr.write(
      `rocketwire consume: stopped by --idle-exit ${a.idleExitS} before --limit ${a.limit}: ${printed} message${printed === 1 ? '' : 's'} consumed\n`,
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
    io.stderr.write(consumeInterrupted(printed, a.topic, Date.now() - begin));
    return 130;
  }
  return unreached.length > 0 || reporter.skipped > 0 ? 1 : 0;
}
