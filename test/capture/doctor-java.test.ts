import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { javaConsume, javaProduce } from '../interop/java-client.js';
import { V5_VERSION } from '../interop/harness.js';
import { interopReady } from '../interop/skip.js';
import { diagnoseFile, liveSkip, startCapture } from './doctor-capture.js';

// A clean capture of the stock Java 5.3.3 client (producer, then push consumer) on the embedded
// broker: Java's own habits (route lookups of %RETRY% topics, first lookups of a topic that sending
// creates, held pulls left at shutdown, SUBSCRIPTION_NOT_EXIST answers after unregistering) are
// not problems, and the doctor must find nothing.

t.setTimeout(120_000);

if (await interopReady(t, [V5_VERSION])) {
  t.test('the doctor on a clean capture of the Java client: nothing found', { skip: liveSkip }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'rocketwire-doctor-java-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const broker = await startBroker({ queues: 2 });
    t.teardown(() => broker.close());
    const ports = [broker.namesrv, broker.broker].map((a) => Number(a.split(':')[1]));
    const file = join(dir, 'java.pcap');
    const cap = await startCapture(file, ports);
    const { summary } = await javaProduce({ namesrv: broker.namesrv, topic: 'TJavaClean', count: 20 });
    t.equal(summary.sent, 20);
    const { messages } = await javaConsume({
      namesrv: broker.namesrv,
      topic: 'TJavaClean',
      group: 'GJavaClean',
      expect: 20,
      from: 'first',
    });
    t.equal(new Set(messages.map((m) => m.msgId)).size, 20);
    await cap.stop();
    const d = diagnoseFile(file, ports);
    t.ok(d.frames > 20, `${d.frames} frames`);
    t.same(d.findings, [], 'nothing found');
  });
}
