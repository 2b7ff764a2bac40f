// A consumer process for bench/hostile's zip-bomb attack: it consumes a topic holding zlib bombs among
// ordinary messages with one consumer kind (push, lite pull or POP) and prints one JSON line with
// its peak RSS. A watchdog ends it (exit 3) when RSS passes `--rss-limit-mb`, as the kernel's OOM
// killer would have ended it later.
//
//   node dist/bench/hostile/bomb-consumer.js MODE NAMESRV TOPIC LEGIT_COUNT [RSS_LIMIT_MB]
import { LitePullConsumer, PushConsumer, SimpleConsumer, type MessageExt } from '../../lib/index.js';

type Mode = 'push' | 'lite' | 'pop';

async function main(): Promise<void> {
  const [modeArg, namesrvAddr, topic, legitArg, limitArg] = process.argv.slice(2);
  const mode = modeArg as Mode;
  if (!['push', 'lite', 'pop'].includes(mode) || !namesrvAddr || !topic || !legitArg) {
    throw new Error('usage: bomb-consumer.js push|lite|pop NAMESRV TOPIC LEGIT_COUNT [RSS_LIMIT_MB]');
  }
  const legitWanted = Number(legitArg);
  const rssLimit = Number(limitArg ?? 2048) * 1024 * 1024;
  let peak = process.memoryUsage.rss();
  const report = (extra: Record<string, unknown>): void => {
    process.stdout.write(JSON.stringify({ mode, peakRssMb: Math.round(peak / 2 ** 20), ...extra }) + '\n');
  };
  const legit = new Set<string>();
  let bombsHandled = 0;
  const watchdog = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    if (peak > rssLimit) {
      report({ killed: true, legit: legit.size, bombsHandled });
      process.exit(3);
    }
  }, 20);
  const see = (m: MessageExt): void => {
    if (m.body.length > 1024 * 1024) bombsHandled++;
    else legit.add(m.body.toString());
  };
  const group = `hostile_bomb_${mode}_${process.pid}`;
  const deadline = Date.now() + 90_000;
  const done = (): boolean => legit.size >= legitWanted || Date.now() > deadline;
  if (mode === 'push') {
    const c = new PushConsumer({ group, namesrvAddr, consumeFromWhere: 'first', logger: false });
    c.subscribe(topic, '*');
    await c.start(async (msgs) => {
      for (const m of msgs) see(m);
    });
    while (!done()) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 2000)); // the bombs' own fate: sent back, not held
    await c.shutdown();
  } else if (mode === 'lite') {
    const c = new LitePullConsumer({ group, namesrvAddr, consumeFromWhere: 'first', logger: false });
    c.subscribe(topic, '*');
    await c.start();
    while (!done()) {
      for (const m of await c.poll(500)) see(m);
    }
    await c.shutdown();
  } else {
    const c = new SimpleConsumer({ group, namesrvAddr, topic, initMode: 'MIN', awaitDurationMs: 500, logger: false });
    await c.start();
    while (!done()) {
      for (const m of await c.receive(16, 60_000)) {
        see(m);
        await c.ack(m);
      }
    }
    await c.shutdown();
  }
  clearInterval(watchdog);
  peak = Math.max(peak, process.memoryUsage.rss());
  report({ killed: false, legit: legit.size, bombsHandled });
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bomb-consumer: ${(err as Error).message}\n`);
  process.exit(1);
});
