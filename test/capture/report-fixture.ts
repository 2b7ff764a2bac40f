/**
 * A capture for the HTML report's tests: 30 s of a consumer on two queues (one keeps up, one whose
 * committed offset stalls while messages keep arriving, so its lag grows), offset flushes by
 * UPDATE_CONSUMER_OFFSET, a long poll still held at the end, a producer, heartbeats, and a queue
 * whose group and topic are HTML meant to break the page.
 */
import { CaptureDecoder, DecodeStats } from '../../lib/capture/index.js';
import { TimelineCollector } from '../../lib/capture/report/index.js';
import {
  createRequest,
  createResponse,
  encodeCommand,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';
import {
  heartbeat,
  LINKTYPE,
  linkAll,
  pcap,
  pullRequest,
  storedMessages,
  TcpConnection,
  type Packet,
} from './build-pcap.js';

export const HOSTILE_GROUP = '<img src=x onerror="window.__pwned=1">';
export const HOSTILE_TOPIC = '</script><script>window.__pwned=2</script>&amp;"\'';
export const START = 1_700_000_000;

function found(req: RemotingCommand, n: number, maxOffset: number): RemotingCommand {
  const first = Number(req.extFields!.queueOffset);
  return createResponse(req, ResponseCode.SUCCESS, {
    remark: 'FOUND',
    extFields: {
      nextBeginOffset: String(first + n),
      minOffset: '0',
      maxOffset: String(maxOffset),
      suggestWhichBrokerId: '0',
    },
    body: storedMessages(n, {
      firstOffset: first,
      topic: req.extFields!.topic!,
      queueId: Number(req.extFields!.queueId),
    }),
  });
}

export function reportCapture(): Buffer {
  const consumer = new TcpConnection({ ip: '10.0.0.5', port: 50000 }, { ip: '10.0.0.1', port: 10911 }, { ts: START });
  const producer = new TcpConnection(
    { ip: '10.0.0.6', port: 50001 },
    { ip: '10.0.0.1', port: 10911 },
    { ts: START + 0.0005 },
  );
  const hostile = new TcpConnection(
    { ip: '10.0.0.7', port: 50002 },
    { ip: '10.0.0.2', port: 10911 },
    { ts: START + 0.0007 },
  );
  const pkts: Packet[] = [...consumer.handshake(), ...producer.handshake(), ...hostile.handshake()];
  let opaque = 1;
  let offset0 = 0;
  let offset1 = 100;
  const stalled = 100;
  for (let step = 0; step < 60; step++) {
    const t = START + step * 0.5;
    consumer.ts = Math.max(consumer.ts, t);
    // Queue 0 keeps up: each pull finds 5 and commits what the last one found.
    const p0 = pullRequest(opaque++, {
      topic: 'Orders',
      group: 'cg-orders',
      queueId: 0,
      queueOffset: offset0,
      commitOffset: offset0,
      sysFlag: step === 0 ? 2 : 3,
    });
    pkts.push(...consumer.send(true, encodeCommand(p0)));
    consumer.ts += 0.002 + (step % 7) * 0.001;
    pkts.push(...consumer.send(false, encodeCommand(found(p0, 5, offset0 + 5))));
    offset0 += 5;
    // Queue 1: messages keep coming, found in pulls, but the committed offset stays at 100.
    const p1 = pullRequest(opaque++, {
      topic: 'Orders',
      group: 'cg-orders',
      queueId: 1,
      queueOffset: offset1,
      commitOffset: stalled,
      sysFlag: 3,
    });
    pkts.push(...consumer.send(true, encodeCommand(p1)));
    consumer.ts += 0.004;
    pkts.push(
      ...consumer.send(
        false,
        encodeCommand(
          step % 3 === 2
            ? createResponse(p1, ResponseCode.PULL_NOT_FOUND, {
                remark: 'OFFSET_OVERFLOW_ONE',
                extFields: {
                  nextBeginOffset: String(offset1),
                  minOffset: '0',
                  maxOffset: String(offset1 + 8),
                  suggestWhichBrokerId: '0',
                },
              })
            : found(p1, 4, offset1 + 8),
        ),
      ),
    );
    if (step % 3 !== 2) offset1 += 4;
    if (step % 10 === 9) {
      const u = createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        opaque: opaque++,
        oneway: true,
        extFields: { consumerGroup: 'cg-orders', topic: 'Orders', queueId: '0', commitOffset: String(offset0) },
      });
      pkts.push(...consumer.send(true, encodeCommand(u)));
      const hb = heartbeat(opaque++);
      pkts.push(...consumer.send(true, encodeCommand(hb)));
      pkts.push(...consumer.send(false, encodeCommand(createResponse(hb, ResponseCode.SUCCESS))));
    }
    // The producer sends 3 messages a step; one answer is SYSTEM_BUSY.
    producer.ts = Math.max(producer.ts, t + 0.1);
    for (let k = 0; k < 3; k++) {
      const s = createRequest(RequestCode.SEND_MESSAGE_V2, {
        opaque: opaque++,
        extFields: {
          a: 'pg',
          b: 'Orders',
          c: 'TBW102',
          d: '4',
          e: String(k),
          f: '0',
          g: String(START * 1000),
          h: '0',
          i: 'TAGS\u0001x',
          j: '0',
          k: 'false',
          m: 'false',
        },
        body: Buffer.from('order'),
      });
      pkts.push(...producer.send(true, encodeCommand(s)));
      producer.ts += 0.001 + k * 0.002;
      const busy = step === 20 && k === 1;
      pkts.push(
        ...producer.send(
          false,
          encodeCommand(
            createResponse(
              s,
              busy ? ResponseCode.SYSTEM_BUSY : 0,
              busy
                ? { remark: '[PCBUSY_CLEAN_QUEUE]' }
                : { extFields: { msgId: 'X', queueId: String(k), queueOffset: '0' } },
            ),
          ),
        ),
      );
    }
  }
  // The hostile queue: one answered pull.
  hostile.ts = START + 10;
  const h = pullRequest(opaque++, {
    topic: HOSTILE_TOPIC,
    group: HOSTILE_GROUP,
    queueId: 3,
    queueOffset: 0,
    commitOffset: 0,
    sysFlag: 2,
  });
  pkts.push(...hostile.send(true, encodeCommand(h)));
  pkts.push(
    ...hostile.send(
      false,
      encodeCommand(
        createResponse(h, ResponseCode.PULL_NOT_FOUND, {
          remark: '<b>x</b>',
          extFields: { nextBeginOffset: '0', minOffset: '0', maxOffset: '0', suggestWhichBrokerId: '0' },
        }),
      ),
    ),
  );
  // A long poll on queue 0 still held when the capture stops.
  consumer.ts = START + 30;
  pkts.push(
    ...consumer.send(
      true,
      encodeCommand(
        pullRequest(opaque++, {
          topic: 'Orders',
          group: 'cg-orders',
          queueId: 0,
          queueOffset: offset0,
          commitOffset: offset0,
          sysFlag: 3,
        }),
      ),
    ),
  );
  pkts.sort((a, b) => a.ts - b.ts);
  return pcap(linkAll('ethernet', pkts), { linkType: LINKTYPE.ethernet });
}

/** Decode a capture in this process the way `decode --report` does. */
export function decodeForReport(input: Buffer): { stats: DecodeStats; timelines: TimelineCollector } {
  const stats = new DecodeStats();
  const timelines = new TimelineCollector();
  const d = new CaptureDecoder({
    frame: (f) => {
      stats.add(f);
      timelines.add(f);
    },
    problem: (p) => stats.addProblem(p),
  });
  d.push(input);
  d.end();
  return { stats, timelines };
}
