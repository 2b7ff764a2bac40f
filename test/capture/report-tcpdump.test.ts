import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { DecodeStats, CaptureDecoder } from '../../lib/capture/index.js';
import type { ReportData } from '../../lib/capture/report/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { RequestCode } from '../../protocol/index.js';
import { runCli } from '../cli/run-in-process.js';
import { produce, uniqueName, until, withBroker } from '../consumer/helpers.js';
import { startCapture } from './doctor-capture.js';
import { Browser, CHROMIUM, hasChromium } from './report-browser.js';

// A real capture for the report: tcpdump on loopback records the embedded broker, a producer and
// a push consumer that consumes 120 messages and shuts down (flushing its offsets); the report of
// that file must hold the numbers of --stats --json and render in Chromium without an error.
// CI runs as root with tcpdump and chromium (.ci/install-deps) and sets ROCKETWIRE_REQUIRE_JAVA.

const required = process.env.ROCKETWIRE_REQUIRE_JAVA !== undefined && process.env.ROCKETWIRE_REQUIRE_JAVA !== '';
const hasTcpdump = spawnSync('tcpdump', ['--version']).status === 0;
const root = process.getuid?.() === 0;
const browser = hasChromium();
const missing = !hasTcpdump
  ? 'tcpdump is not installed'
  : !root
    ? 'tcpdump needs root'
    : !browser
      ? `${CHROMIUM} is not installed`
      : null;

const sum = (xs: readonly (number | null)[]): number => xs.reduce<number>((a, b) => a + (b ?? 0), 0);

t.test(
  'the report of a tcpdump capture of a real consumer',
  { skip: !required && missing ? `${missing} (set ROCKETWIRE_REQUIRE_JAVA to make this test mandatory)` : false },
  async (t) => {
    t.equal(missing, null, 'tcpdump, root and chromium');
    if (missing) return;
    const dir = mkdtempSync(join(tmpdir(), 'rocketwire-report-tcpdump-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const broker = await withBroker({ queues: 2 });
    t.teardown(() => broker.close());
    const brokerPort = broker.broker.split(':')[1]!;
    const namesrvPort = broker.namesrv.split(':')[1]!;
    const file = join(dir, 'lo.pcap');
    const cap = await startCapture(file, [Number(brokerPort), Number(namesrvPort)]);

    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 120);
    let seen = 0;
    const consumer = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      persistOffsetIntervalMs: 200,
      consumeFromWhere: 'first',
    });
    consumer.subscribe(topic, '*');
    await consumer.start((msgs) => {
      seen += msgs.length;
      return 'CONSUME_SUCCESS';
    });
    await until(() => seen >= 120, '120 messages');
    await consumer.shutdown();
    // Stop tcpdump once the file holds the consumer's goodbye (UNREGISTER_CLIENT comes after the
    // offsets are flushed): -U writes each packet as it comes, but tcpdump may lag on a busy machine.
    const unregistered = (): boolean => {
      const s = new DecodeStats();
      const d = new CaptureDecoder({ frame: (f) => s.add(f), problem: () => {} });
      try {
        d.push(readFileSync(file));
        d.end();
      } catch {
        return false;
      }
      const byCode = (s.toJSON() as { byCode: Record<string, { responses: number }> }).byCode;
      return (byCode.UNREGISTER_CLIENT?.responses ?? 0) > 0;
    };
    await until(unregistered, 'the capture to hold UNREGISTER_CLIENT');
    await cap.stop();

    const out = join(dir, 'report.html');
    const r = await runCli(['decode', file, '--report', out]);
    t.equal(r.stderr, '', 'no problems reported');
    t.equal(r.code, 0);
    const stats = JSON.parse((await runCli(['decode', file, '--stats', '--json'])).stdout);
    const html = readFileSync(out, 'utf8');
    const data = JSON.parse(
      /<script type="application\/json" id="data">([^<]*)<\/script>/.exec(html)![1]!,
    ) as ReportData;
    t.same(data.stats, stats, 'the embedded statistics are --stats --json');
    t.ok(
      stats.byCode.PULL_MESSAGE.requests > 0 && stats.byCode.SEND_BATCH_MESSAGE !== undefined,
      'pulls and sends seen',
    );
    const mine = stats.queues.filter((q: { group: string; topic: string }) => q.group === group && q.topic === topic);
    t.equal(mine.length, 2, 'both queues of the topic');
    t.equal(
      mine.reduce((a: number, q: { lastCommit: number }) => a + q.lastCommit, 0),
      120,
      'the last commits add up to the messages produced',
    );
    for (const q of data.timelines.queues) {
      const s = stats.queues.find(
        (x: { group: string; topic: string; queueId: number; broker: string }) =>
          x.group === q.group && x.topic === q.topic && x.queueId === q.queueId && x.broker === q.broker,
      );
      t.equal(sum(q.pulls), s.pulls, `${q.topic}:${q.queueId} pulls over time`);
      t.equal(sum(q.messages), s.pullResults.messages ?? 0, `${q.topic}:${q.queueId} messages over time`);
      if (q.topic === topic)
        t.equal(
          [...q.lag].reverse().find((v) => v !== null),
          0,
          `${q.topic}:${q.queueId} ends with no lag`,
        );
    }
    t.ok(
      data.timelines.requestRates.some((x) => x.code === RequestCode.UPDATE_CONSUMER_OFFSET),
      'the offset flushes are in the rates',
    );

    const b = await Browser.launch();
    t.teardown(() => b.close());
    const { value, errors } = await b.open<{ queues: number; charts: number; codes: number }>(
      pathToFileURL(out).href,
      `({ queues: document.querySelectorAll('section.queue').length, charts: document.querySelectorAll('section.queue svg[data-chart]').length, codes: document.querySelectorAll('#codes tbody tr').length })`,
    );
    t.same(errors, { exceptions: [], consoleErrors: [], logErrors: [], requests: [] }, 'renders without an error');
    t.same(value, {
      queues: stats.queues.length,
      charts: 3 * stats.queues.length,
      codes: Object.keys(stats.byCode).length,
    });
  },
);
