import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { diagnoseFile, liveSkip, startCapture } from './doctor-capture.js';
import { until } from '../support/until.js';

// The doctor on a capture of a broker that stops answering: `rocketwire broker` in a child
// process, frozen with SIGSTOP (as a long GC pause or a stopped VM freezes one), first for 1.5 s
// (slow responses), then until the capture ends (requests never answered, a long poll that never
// returns). The producers and the consumer are rocketwire's, in this process.

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

t.test(
  'a frozen broker: slow responses, requests never answered, a long poll that never returns',
  { skip: liveSkip },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'rocketwire-doctor-frozen-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(
      process.execPath,
      [bin, 'broker', '--namesrv-port', '0', '--broker-port', '0', '--queues', '1'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((r) => child.once('exit', r));
    const killAtExit = (): void => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    };
    process.once('exit', killAtExit);
    child.once('exit', () => process.off('exit', killAtExit));
    const closers: (() => Promise<unknown>)[] = [];
    t.teardown(async () => {
      child.kill('SIGCONT');
      for (const c of closers.reverse()) await c().catch(() => {});
      child.kill('SIGTERM');
      await exited;
    });
    const ready = await new Promise<{ namesrv: string; broker: string }>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const line = out.split('\n').find((l) => l.includes('"ready"'));
        if (line) resolve(JSON.parse(line));
      });
      child.once('exit', (code) => reject(new Error(`broker exited with ${code}`)));
    });
    const ports = [ready.namesrv, ready.broker].map((a) => Number(a.split(':')[1]));
    const namesrvAddr = ready.namesrv;

    const producer = new Producer({ namesrvAddr, group: 'PGSlow' });
    await producer.start();
    closers.push(() => producer.shutdown());
    const hasty = new Producer({ namesrvAddr, group: 'PGHasty', sendMsgTimeoutMs: 1000, retryTimesWhenSendFailed: 0 });
    await hasty.start();
    closers.push(() => hasty.shutdown());
    await producer.send({ topic: 'TFrozen', body: 'first' });
    await hasty.send({ topic: 'TFrozen', body: 'routes known' });
    const got: string[] = [];
    const consumer = new PushConsumer({
      consumerGroup: 'GFrozen',
      namesrvAddr,
      consumeFromWhere: 'first',
      brokerSuspendMaxTimeMs: 400,
    });
    consumer.subscribe('TFrozen', '*');
    await consumer.start((msgs: MessageExt[]) => {
      for (const m of msgs) got.push(m.body.toString());
      return 'CONSUME_SUCCESS';
    });
    closers.push(() => consumer.shutdown());
    for (let i = 0; got.length < 2 && i < 500; i++) await sleep(20);
    t.equal(got.length, 2, 'the consumer is up');

    const file = join(dir, 'frozen.pcap');
    const cap = await startCapture(file, ports);
    const pulls = consumer.stats().pulls;
    await until(() => consumer.stats().pulls >= pulls + 2, 'a few 400 ms long polls come and go');

    // A pause of 1.5 s: the send and the held pull are answered once the broker runs again.
    child.kill('SIGSTOP');
    const slowSend = producer.send({ topic: 'TFrozen', body: 'slow' });
    await sleep(1500);
    child.kill('SIGCONT');
    await slowSend;
    for (let i = 0; !got.includes('slow') && i < 500; i++) await sleep(20);
    t.ok(got.includes('slow'), 'delivered after the pause');
    const afterSlow = consumer.stats().pulls;
    await until(() => consumer.stats().pulls > afterSlow, 'one more long poll come and gone');

    // Frozen until the capture ends: the hasty producer's send times out, the consumer's pull stays out.
    child.kill('SIGSTOP');
    await t.rejects(hasty.send({ topic: 'TFrozen', body: 'lost' }), 'the send times out');
    await sleep(800);
    // A last packet to mark the capture's end: the kernel still accepts connections for the stopped process.
    await new Promise<void>((resolve) => {
      // destroy, not end: a stopped broker would never answer the FIN.
      const s = connect(ports[1]!, '127.0.0.1', () => setTimeout(() => s.destroy(), 20));
      s.on('error', () => resolve());
      s.on('close', () => resolve());
    });
    await cap.stop();
    child.kill('SIGCONT');

    const TIGHT = { longPollMarginMs: 500, unansweredAfterMs: 1000 };
    const { findings } = diagnoseFile(file, ports, TIGHT);
    t.comment(findings.map((f) => `${f.severity} ${f.check}: ${f.summary}`).join('\n'));
    const of = (check: string) => findings.filter((f) => f.check === check);
    t.same(
      [...new Set(findings.map((f) => f.check))].sort(),
      ['long-poll-unanswered', 'slow-response', 'unanswered'],
      'what a frozen broker shows, and nothing else',
    );
    t.match(
      of('slow-response').find((f) => f.evidence.code === 310),
      { summary: /^1 SEND_MESSAGE_V2 response slower than 1\.00 s \(slowest 1\.\d\d s\)/ },
      'the send held up by the pause',
    );
    t.match(
      of('slow-response').find((f) => f.evidence.code === 11),
      {
        summary: /PULL_MESSAGE responses? slower than their suspend time plus 500 ms/,
        evidence: { queue: /^TFrozen\/broker-a\/0$|^%RETRY%GFrozen\/broker-a\/0$/ },
      },
      'the held pull held up by the pause',
    );
    t.match(
      of('unanswered').find((f) => f.evidence.code === 310),
      { severity: 'error', summary: /^a SEND_MESSAGE_V2 request \(topic TFrozen, group PGHasty\) never answered/ },
    );
    t.ok(
      of('long-poll-unanswered').some((f) => f.evidence.group === 'GFrozen' && /never returned/.test(f.summary)),
      "the consumer's long poll never returned",
    );
    t.same(
      [...new Set(diagnoseFile(file, ports).findings.map((f) => f.check))],
      ['slow-response'],
      'with the default thresholds the capture is too short for the rest',
    );
  },
);
