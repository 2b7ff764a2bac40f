import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import {
  createRequest,
  createResponse,
  encodeCommand,
  FrameDecoder,
  decodeCommand,
  isResponse,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';
import { CaptureDecoder } from '../../lib/capture/index.js';
import { PcapReader } from '../../lib/capture/pcap-reader.js';
import { SegmentParser, TcpFlag } from '../../lib/capture/tcp-segment.js';
import { waitFor } from '../support/until.js';
import { heartbeat, pullFound, pullRequest } from './build-pcap.js';

// A real capture: tcpdump on the loopback interface records a plain net server and client that
// exchange remoting frames, then the CLI decodes the file. CI runs as root with tcpdump installed
// (.ci/install-deps) and sets ROCKETWIRE_REQUIRE_JAVA, so there the test must run.

const run = promisify(execFile);
const bin = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');
const required = process.env.ROCKETWIRE_REQUIRE_JAVA !== undefined && process.env.ROCKETWIRE_REQUIRE_JAVA !== '';
const hasTcpdump = spawnSync('tcpdump', ['--version']).status === 0;
const root = process.getuid?.() === 0;

function frames(sock: Socket, onCommand: (c: RemotingCommand) => void): void {
  const dec = new FrameDecoder();
  sock.on('error', () => {}); // a reset at teardown is not what this test is about
  sock.on('data', (chunk: Buffer) => dec.push(chunk, (f) => onCommand(decodeCommand(f))));
}

t.test(
  'decode a tcpdump capture of real loopback traffic',
  {
    skip:
      !required && (!hasTcpdump || !root)
        ? `tcpdump ${hasTcpdump ? 'needs root' : 'is not installed'} (set ROCKETWIRE_REQUIRE_JAVA to make this test mandatory)`
        : false,
  },
  async (t) => {
    t.ok(hasTcpdump, 'tcpdump is installed');
    t.ok(root, 'running as root (tcpdump needs it to capture)');
    if (!hasTcpdump || !root) return;
    const dir = mkdtempSync(join(tmpdir(), 'rocketwire-tcpdump-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'lo.pcap');

    // The server answers every request: pulls with 32 x 1 KiB messages then PULL_NOT_FOUND, anything else SUCCESS.
    let pulls = 0;
    const server = createServer((sock) => {
      frames(sock, (c) => {
        if (isResponse(c) || (c.flag & 2) !== 0) return;
        let rsp: RemotingCommand;
        if (c.code === RequestCode.PULL_MESSAGE) {
          rsp =
            pulls++ === 0
              ? pullFound(c, 32, { bodySize: 1024 })
              : createResponse(c, ResponseCode.PULL_NOT_FOUND, { remark: 'OFFSET_OVERFLOW_ONE' });
        } else {
          rsp = createResponse(c, ResponseCode.SUCCESS, { serializeType: c.serializeType });
        }
        sock.write(encodeCommand(rsp));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    const port = (server.address() as { port: number }).port;

    // --immediate-mode: without it libpcap hands packets over a ring-buffer block at a time, and
    // packets of a short exchange still sit in an unfinished block when SIGINT stops tcpdump.
    const tcpdump = spawn(
      'tcpdump',
      ['-i', 'lo', '-n', '-U', '--immediate-mode', '-w', file, 'tcp', 'port', String(port)],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let tcpdumpErr = '';
    await new Promise<void>((resolve, reject) => {
      tcpdump.stderr.on('data', (b: Buffer) => {
        tcpdumpErr += b.toString();
        if (tcpdumpErr.includes('listening on')) resolve();
      });
      tcpdump.on('exit', (code) => reject(new Error(`tcpdump exited with ${code}: ${tcpdumpErr.trim()}`)));
    });

    const requests = [
      heartbeat(1),
      pullRequest(2, { queueOffset: 0, commitOffset: 0, sysFlag: 2 }),
      pullRequest(3, { queueOffset: 32, commitOffset: 32, sysFlag: 3 }),
      createRequest(RequestCode.GET_MAX_OFFSET, {
        opaque: 4,
        serializeType: 'ROCKETMQ',
        extFields: { topic: 'TopicTest', queueId: '0' },
      }),
    ];
    const oneway = createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
      opaque: 5,
      oneway: true,
      extFields: { consumerGroup: 'cg1', topic: 'TopicTest', queueId: '0', commitOffset: '32' },
    });
    const client = createConnection(port, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    const clientAddr = `127.0.0.1:${client.localPort}`;
    const answered = new Map<number, RemotingCommand>();
    await new Promise<void>((resolve) => {
      frames(client, (c) => {
        answered.set(c.opaque, c);
        if (answered.size === requests.length) resolve();
      });
      // One at a time: the decoded latencies then belong to one round trip each.
      let i = 0;
      const next = (): void => {
        if (i < requests.length) client.write(encodeCommand(requests[i++]!));
      };
      client.on('data', () => setImmediate(next));
      next();
    });
    client.write(encodeCommand(oneway));
    await new Promise<void>((resolve) => client.end(resolve));
    await new Promise((resolve) => client.once('close', resolve));
    // Stop tcpdump only once the file holds every frame (-U writes each packet as it comes; on a
    // busy machine tcpdump may lag behind the exchange, and SIGINT drops what it has not read yet).
    const framesInFile = (): number => {
      let n = 0;
      const dec = new CaptureDecoder({ frame: () => n++, problem: () => {} });
      try {
        dec.push(readFileSync(file));
      } catch {
        return 0;
      }
      return n;
    };
    // and the closing packets: a FIN from each side
    const finsInFile = (): number => {
      const from = new Set<string>();
      const segments = new SegmentParser(() => {});
      const reader = new PcapReader(
        (pkt) => {
          const seg = segments.parse(pkt);
          if (seg && seg.flags & TcpFlag.FIN) from.add(seg.src);
        },
        () => {},
      );
      try {
        reader.push(readFileSync(file));
      } catch {
        return 0;
      }
      return from.size;
    };
    await waitFor(() => framesInFile() >= 9 && finsInFile() === 2, 10_000);
    const exited = new Promise((resolve) => tcpdump.once('exit', resolve));
    tcpdump.kill('SIGINT');
    await exited;

    // The port is not a RocketMQ port: the decoder must recognise the flow by its frames.
    const { stdout, stderr } = await run(process.execPath, [bin, 'decode', file, '--json'], {
      maxBuffer: 64 * 1024 * 1024,
    });
    t.equal(stderr, '', 'no problems reported (exit code 0, or run() would have thrown)');
    const out = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const reqs = out.filter((o) => o.kind === 'request');
    const rsps = out.filter((o) => o.kind === 'response');
    t.same(
      reqs.map((o) => o.name),
      ['HEART_BEAT', 'PULL_MESSAGE', 'PULL_MESSAGE', 'GET_MAX_OFFSET', 'UPDATE_CONSUMER_OFFSET'],
    );
    t.same(
      rsps.map((o) => `${o.name}/${o.requestCode}`),
      ['SUCCESS/34', 'SUCCESS/11', 'PULL_NOT_FOUND/11', 'SUCCESS/30'],
    );
    for (const o of reqs) {
      t.equal(o.src, clientAddr, `${o.name} src`);
      t.equal(o.dst, `127.0.0.1:${port}`, `${o.name} dst`);
    }
    const now = Date.now() / 1000;
    for (const o of out)
      t.ok(typeof o.ts === 'number' && Math.abs(o.ts - now) < 600, `${o.name} #${o.opaque} ts is capture time`);
    for (const o of rsps) {
      t.equal(o.src, `127.0.0.1:${port}`);
      t.equal(o.dst, clientAddr);
      t.ok(typeof o.latencyMs === 'number' && o.latencyMs >= 0, `latency of #${o.opaque}`);
      const req = out.find((r) => r.kind === 'request' && r.opaque === o.opaque);
      t.ok(o.ts >= req.ts, 'response after its request');
    }
    const found = rsps[1];
    t.equal(found.messages.length, 32);
    t.equal(found.messages[31].queueOffset, 31);
    t.equal(Buffer.from(found.messages[0].bodyBase64, 'base64').length, 1024);
    t.equal(reqs[3].serializeType, 'ROCKETMQ');
    t.equal(reqs[4].oneway, true);
  },
);
