import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import {
  createRequest,
  decodeCommand,
  encodeCommand,
  FrameDecoder,
  RequestCode,
  ResponseCode,
} from '../../protocol/index.js';
import { client, sendRequest } from '../broker/helpers.js';
import { until } from '../consumer/helpers.js';
import { diagnoseFile, liveSkip, startCapture } from './doctor-capture.js';

// SYSTEM_BUSY really happening, recorded by tcpdump: the embedded broker sheds answers its
// server-wide output budget has no room for (a client that asks for a 1 MiB message six times
// without reading), as Java's broker answers SYSTEM_BUSY when it cannot take a request on. The
// doctor must name it, with the request it answered and Java's remark, and find nothing else.

const MiB = 1024 * 1024;

t.test(
  'the doctor on a capture of a broker shedding load: SYSTEM_BUSY found, nothing else',
  { skip: liveSkip },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'rocketwire-doctor-busy-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    // 8 MiB: 4 MiB of output for all connections, 3.5 MiB of it for answers over 64 KiB, so of six
    // requests for a 1 MiB message taken in one read the first three are served and the rest refused
    // (the connection's own bound, 16 MiB, is not reached: it holds none of them back).
    const broker = await startBroker({
      maxBufferedBytes: 8 * MiB,
      maxMessageSize: 2 * MiB,
    });
    t.teardown(() => broker.close());
    const c = client();
    t.teardown(() => c.close());
    t.equal(
      (await c.invoke(broker.broker, sendRequest('TBusy', Buffer.alloc(1 * MiB, 0x62)))).code,
      ResponseCode.SUCCESS,
    );

    const ports = [broker.namesrv, broker.broker].map((a) => Number(a.split(':')[1]));
    const file = join(dir, 'busy.pcap');
    const cap = await startCapture(file, ports);
    const [host, port] = broker.broker.split(':') as [string, string];
    const s = net.connect({ host, port: Number(port) });
    s.on('error', () => undefined);
    await once(s, 'connect');
    s.pause(); // read nothing until every request is in: the answers back up behind the socket
    const frames = Array.from({ length: 6 }, (_, i) =>
      encodeCommand(createRequest(RequestCode.VIEW_MESSAGE_BY_ID, { opaque: i + 1, extFields: { offset: '0' } })),
    );
    s.write(Buffer.concat(frames));
    const got: number[] = [];
    const dec = new FrameDecoder();
    s.on('data', (d: Buffer) => dec.push(d, (f) => got.push(decodeCommand(f).code)));
    // Every request answered (served or refused) before reading: poll the broker's connection stats.
    const srv = broker.instances[0]!.server;
    await until(
      () =>
        [...srv.connections].some(
          (x) => x.stats().framesIn === 6 && x.stats().framesOut + x.stats().queuedFrames === 6,
        ),
      'the six requests answered or queued',
    );
    s.resume();
    await until(() => got.length === 6, 'six answers read');
    s.destroy();
    const busy = got.filter((code) => code === ResponseCode.SYSTEM_BUSY).length;
    t.ok(busy > 0 && busy < 6, `${busy} of 6 refused SYSTEM_BUSY, the others served`);
    // tcpdump may lag behind the burst: wait until the file holds the refusals the client read.
    const refusals = (): number =>
      diagnoseFile(file, ports).findings.reduce(
        (n, f) => n + (f.evidence.code === ResponseCode.SYSTEM_BUSY ? f.evidence.count : 0),
        0,
      );
    await until(() => refusals() === busy, 'the capture to hold every SYSTEM_BUSY');
    await cap.stop();

    const { findings } = diagnoseFile(file, ports);
    t.same(
      findings.map((f) => `${f.check} ${f.evidence.code}`),
      [`error-response ${ResponseCode.SYSTEM_BUSY}`],
      'SYSTEM_BUSY found, nothing else',
    );
    t.match(findings[0], {
      severity: 'warning',
      summary: new RegExp(
        `^${busy} VIEW_MESSAGE_BY_ID requests? answered SYSTEM_BUSY \\(2\\): "\\[OVERLOAD\\]system busy, start flow control for a while"$`,
      ),
      meaning: /shedding load/,
      evidence: { count: busy },
    });
    t.match(findings[0]!.evidence.flow, /^127\.0\.0\.1:\d+ -> 127\.0\.0\.1:\d+$/);
  },
);
