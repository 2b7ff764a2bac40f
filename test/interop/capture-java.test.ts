// The stock Java producer and push consumer talk to a real Apache RocketMQ 5.3.3 broker while
// tcpdump records the loopback traffic; `rocketwire decode` must turn the capture into exactly the
// conversation the Java side reports: one SEND_MESSAGE_V2 per message it sent (with the UNIQ_KEY,
// queue and offset it was told), paired with the broker's answer, and pull responses carrying every
// message the Java consumer received, at the offsets it saw — with nothing lost or undecodable.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startRealCluster, V5_VERSION } from './harness.js';
import { javaProduce, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');
const required = process.env.ROCKETWIRE_REQUIRE_JAVA !== undefined && process.env.ROCKETWIRE_REQUIRE_JAVA !== '';
const hasTcpdump = spawnSync('tcpdump', ['--version']).status === 0;
const root = process.getuid?.() === 0;

interface DecodedMessage {
  msgId: string;
  offsetMsgId: string;
  topic: string;
  queueId: number;
  queueOffset: number;
}
interface DecodedFrame {
  kind: 'request' | 'response';
  code: number;
  opaque: number;
  oneway: boolean;
  extFields: Record<string, string>;
  requestCode?: number;
  latencyMs?: number;
  src: string;
  dst: string;
  messages?: DecodedMessage[];
  json?: unknown;
}

function decode(file: string): Promise<{ code: number | null; frames: DecodedFrame[]; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, 'decode', file, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('close', (code) =>
      done({
        code,
        stderr: err,
        frames: out
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as DecodedFrame),
      }),
    );
  });
}

const skipCapture = !required && (!hasTcpdump || !root);

if (skipCapture) {
  t.comment(`skipping the capture interop test: tcpdump ${hasTcpdump ? 'needs root' : 'is not installed'}`);
} else if (await interopReady(t, [V5_VERSION])) {
  t.test('a capture of the Java client and the real broker decodes into the requests the Java side made', async (t) => {
    t.ok(hasTcpdump, 'tcpdump is installed');
    t.ok(root, 'running as root (tcpdump needs it)');
    const cluster = await startRealCluster({ version: V5_VERSION });
    t.teardown(() => cluster.stop({ graceful: false }));
    const topic = 'CaptureTopic';
    await cluster.createTopic(topic, { queues: 4 });
    const dir = mkdtempSync(join(tmpdir(), 'rocketwire-capture-java-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'java.pcap');
    const ports = [cluster.namesrv, ...cluster.brokers].map((a) => a.split(':').pop()!);
    const filter = ports.flatMap((p, i) => (i === 0 ? ['tcp', 'port', p] : ['or', 'tcp', 'port', p]));
    const tcpdump = spawn('tcpdump', ['-i', 'lo', '-n', '-U', '--immediate-mode', '-s', '0', '-w', file, ...filter], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let tcpdumpErr = '';
    await new Promise<void>((ok, fail) => {
      tcpdump.stderr.on('data', (b: Buffer) => {
        tcpdumpErr += b.toString();
        if (tcpdumpErr.includes('listening on')) ok();
      });
      tcpdump.once('exit', (code) => fail(new Error(`tcpdump exited with ${code}: ${tcpdumpErr.trim()}`)));
    });
    const stopTcpdump = () =>
      new Promise<void>((ok) => {
        if (tcpdump.exitCode !== null) return ok();
        tcpdump.once('exit', () => ok());
        tcpdump.kill('SIGINT');
      });
    t.teardown(stopTcpdump);

    const count = 24;
    const group = 'capture_java_cg';
    const consumer = await startJavaConsumer({
      namesrv: cluster.namesrv,
      topic,
      group,
      expect: count,
      timeoutMs: 60_000,
      from: 'first',
    });
    const { sent } = await javaProduce({ namesrv: cluster.namesrv, topic, count, size: 200, tag: 'Cap' });
    const { summary, messages: received } = await consumer.done;
    t.equal(sent.length, count, 'the Java producer sent every message');
    t.equal(summary.received, count, 'the Java consumer received every message');
    // Let the last packets reach the capture file before stopping tcpdump.
    await new Promise((r) => setTimeout(r, 300));
    await stopTcpdump();

    const { code, frames, stderr } = await decode(file);
    t.equal(code, 0, `decode exits 0 (stderr: ${stderr.trim()})`);
    t.equal(stderr.trim(), '', 'nothing was lost or undecodable');

    // Producer side: exactly one SEND_MESSAGE_V2 per message, matching what the Java producer reported.
    const sends = frames.filter((f) => f.kind === 'request' && f.code === 310 && f.extFields.b === topic);
    t.equal(sends.length, count, 'one SEND_MESSAGE_V2 request per message sent');
    const sendResponses = new Map(
      frames.filter((f) => f.kind === 'response' && f.requestCode === 310).map((f) => [`${f.dst}|${f.opaque}`, f]),
    );
    const problems: string[] = [];
    for (const s of sent) {
      const req = sends.find((f) => (f.extFields.i ?? '').includes(`UNIQ_KEY\u0001${s.msgId}`));
      if (!req) {
        problems.push(`no send request carries UNIQ_KEY ${s.msgId}`);
        continue;
      }
      if (req.extFields.a === undefined || req.extFields.g === undefined)
        problems.push(`${s.msgId}: send header lacks a/g`);
      if (!(req.extFields.i ?? '').includes('TAGS\u0001Cap'))
        problems.push(`${s.msgId}: tag missing from the properties`);
      const rsp = sendResponses.get(`${req.src}|${req.opaque}`);
      if (!rsp) {
        problems.push(`${s.msgId}: no response paired with opaque ${req.opaque}`);
        continue;
      }
      if (rsp.code !== 0) problems.push(`${s.msgId}: response code ${rsp.code}`);
      if (rsp.extFields.msgId !== s.offsetMsgId)
        problems.push(`${s.msgId}: response msgId ${rsp.extFields.msgId} != ${s.offsetMsgId}`);
      if (Number(rsp.extFields.queueId) !== s.queueId || Number(rsp.extFields.queueOffset) !== s.queueOffset) {
        problems.push(
          `${s.msgId}: response queue ${rsp.extFields.queueId}/${rsp.extFields.queueOffset} != ${s.queueId}/${s.queueOffset}`,
        );
      }
      if (typeof rsp.latencyMs !== 'number') problems.push(`${s.msgId}: no latency on the paired response`);
    }
    t.same(problems, [], 'every send request and response matches what the Java producer reported');

    // Consumer side: the group registered, asked for its members and offsets, and pulled every message it got.
    const heartbeats = frames.filter((f) => f.kind === 'request' && f.code === 34);
    t.ok(
      heartbeats.some((f) => JSON.stringify(f.json ?? {}).includes(`"groupName":"${group}"`)),
      'a HEART_BEAT body names the Java consumer group',
    );
    t.ok(
      frames.some((f) => f.kind === 'request' && f.code === 38 && f.extFields.consumerGroup === group),
      'GET_CONSUMER_LIST_BY_GROUP for the group',
    );
    const offsetQueries = frames.filter(
      (f) =>
        f.kind === 'request' && f.code === 14 && f.extFields.consumerGroup === group && f.extFields.topic === topic,
    );
    t.same(
      [...new Set(offsetQueries.map((f) => f.extFields.queueId))].sort(),
      ['0', '1', '2', '3'],
      'QUERY_CONSUMER_OFFSET for each of the 4 queues',
    );
    const pulled = new Map<string, DecodedMessage>();
    for (const f of frames) {
      if (f.kind === 'response' && f.requestCode === 11)
        for (const m of f.messages ?? []) if (m.topic === topic) pulled.set(m.msgId, m);
    }
    const missing = received.filter((m) => {
      const p = pulled.get(m.msgId);
      return !p || p.queueId !== m.queueId || p.queueOffset !== m.queueOffset;
    });
    t.same(
      missing.map((m) => m.msgId),
      [],
      'every message the Java consumer received is in a decoded pull response, at the same queue and offset',
    );
    const pulls = frames.filter((f) => f.kind === 'request' && f.code === 11 && f.extFields.consumerGroup === group);
    t.ok(pulls.length >= 4, `the consumer's PULL_MESSAGE requests are decoded (${pulls.length})`);
    t.ok(
      pulls.every((f) => f.extFields.suspendTimeoutMillis === '15000'),
      'with the 15 s long-poll suspend',
    );
  });
}
