/**
 * The transport floor, as a benchmark peer run in its own process by `rocketwire bench --vs raw-pull`:
 * the same pulls a push consumer makes (one long poll in flight per queue, 32 messages each, from the
 * first offset, a new group) over one plain socket per broker, with everything a client does on top
 * left out — no message decoding, no cache, no handler, no offsets. Records are only counted (by
 * walking their size fields). What it reaches is the most any consumer in this runtime can get from
 * that broker on that machine; the ratio of rocketwire to it says how much the client itself costs.
 *
 * With a sixth argument `decode` (`--vs decode-pull`) every pull body is also decoded into message
 * objects by protocol's decodeMessages, the part no client that hands out messages can skip: the
 * floor of a consumer written with this decoder.
 *
 * argv: namesrv topic group expect timeoutMs [decode]. Prints the same JSON lines as the other peers.
 */
import * as net from 'node:net';
import {
  countStoredRecords,
  decodeMessages,
  encodeCommand,
  FrameDecoder,
  ResponseCode,
  type MessageQueue,
} from '../../protocol/index.js';
import { parseAddress } from '../../lib/remoting/address.js';
import { ReadSlab, slabReadOptions } from '../../lib/remoting/read-slab.js';
import { CliError } from '../../lib/cli/common.js';
import { exitAfterStdout } from './exit-flushed.js';
import { floorPullAnswer, floorPullRequest, floorRoute } from './floor-wire.js';

const [namesrv, topic, group, expectText, timeoutText, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string?,
];
const decode = mode === 'decode';
const expect = Number(expectText);
const timeoutMs = Number(timeoutText);

function print(obj: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

let received = 0;
let firstTs = 0;
let lastTs = 0;

/** One connection to a broker with one pull in flight for each of its queues. */
function pullFrom(addr: string, queues: MessageQueue[], fail: (err: Error) => void, done: () => void): net.Socket {
  const { host, port } = parseAddress(addr);
  // Read as rocketwire's client does (into 256 KiB slabs, lib/remoting/read-slab.ts) and send the
  // pulls made while handling one read in one write, as its outbound queue does: the floor is
  // what the same I/O gives without a client on top.
  const slab = new ReadSlab();
  const socket = net.connect({ host, port, ...slabReadOptions(slab) });
  socket.setNoDelay(true);
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  const byOpaque = new Map<number, MessageQueue>();
  let opaque = 1;
  const pull = (mq: MessageQueue, offset: number): void => {
    const req = floorPullRequest(group, topic, mq, offset, Date.now());
    req.opaque = opaque++;
    byOpaque.set(req.opaque, mq);
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    socket.write(encodeCommand(req));
  };
  const decoder = new FrameDecoder();
  socket.on('connect', () => {
    for (const mq of queues) pull(mq, 0);
  });
  socket.on('error', fail);
  slab.attach((chunk: Buffer) => {
    try {
      decoder.push(chunk, (frame) => {
        const answer = floorPullAnswer(frame, byOpaque, addr);
        if (answer === null) return;
        const { mq, res, nextBeginOffset } = answer;
        const body = res.body;
        if (res.code === ResponseCode.SUCCESS && body) {
          received += decode ? decodeMessages(body).length : countStoredRecords(body);
          lastTs = Date.now();
          if (firstTs === 0) firstTs = lastTs;
          if (received >= expect) {
            done();
            return;
          }
        }
        pull(mq, nextBeginOffset);
      });
    } catch (err) {
      fail(err as Error);
    }
  });
  return socket;
}

async function main(): Promise<void> {
  const queues = await floorRoute(namesrv, topic);
  if (queues.length === 0) throw new CliError(`topic ${topic} has no readable queue`);
  print({ type: 'started', group, topic });
  const byBroker = new Map<string, MessageQueue[]>();
  for (const { mq, addr } of queues) {
    const qs = byBroker.get(addr);
    if (qs) qs.push(mq);
    else byBroker.set(addr, [mq]);
  }
  let finish: (err?: Error) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => {
    finish = (err) => (err ? reject(err) : resolve());
  });
  const sockets = [...byBroker].map(([addr, qs]) => pullFrom(addr, qs, finish, () => finish()));
  const progress = setInterval(() => print({ type: 'progress', received, ts: Date.now() }), 100);
  const timer = setTimeout(() => finish(), timeoutMs);
  try {
    await finished;
  } finally {
    clearInterval(progress);
    clearTimeout(timer);
    for (const s of sockets) s.destroy();
  }
  print({ type: 'bench', received, expected: expect, complete: received >= expect, firstTs, lastTs });
  exitAfterStdout(0);
}

main().catch((err: Error) => {
  print({ type: 'error', message: err.message });
  exitAfterStdout(1);
});
