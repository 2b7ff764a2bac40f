/**
 * The latency floor of `rocketwire bench --latency`: one plain socket per broker with one long poll
 * parked per queue (as a push consumer parks them), each pull answered by the broker when a message
 * arrives, and the next pull sent as soon as the answer is read. Nothing else: no decoding beyond
 * the two fields the bench reads (latency-child.ts), no cache, no handler pool, no offsets
 * committed. The client's latency above this is what the client adds.
 */
import * as net from 'node:net';
import { encodeCommand, FrameDecoder, ResponseCode, type MessageQueue } from '../../protocol/index.js';
import { parseAddress } from '../../lib/remoting/address.js';
import { CliError } from '../../lib/cli/common.js';
import { floorPullAnswer, floorPullRequest, floorRoute } from './floor-wire.js';

/** Starts the long polls; `onBody` sees each pull answer's body. Returns a stop function. */
export async function startFloor(
  namesrv: string,
  topic: string,
  group: string,
  onBody: (body: Buffer, start: number, end: number) => void,
): Promise<() => void> {
  const queues = await floorRoute(namesrv, topic);
  if (queues.length === 0) throw new CliError(`topic ${topic} has no readable queue`);
  const byBroker = new Map<string, MessageQueue[]>();
  for (const { mq, addr } of queues) {
    const qs = byBroker.get(addr);
    if (qs) qs.push(mq);
    else byBroker.set(addr, [mq]);
  }
  const fail = (err: Error): void => {
    process.stdout.write(JSON.stringify({ type: 'fatal', error: err.message }) + '\n');
    process.exit(1);
  };
  const sockets = [...byBroker].map(([addr, qs]) => pollFrom(addr, qs, topic, group, onBody, fail));
  return () => {
    for (const s of sockets) s.destroy();
  };
}

function pollFrom(
  addr: string,
  queues: MessageQueue[],
  topic: string,
  group: string,
  onBody: (body: Buffer, start: number, end: number) => void,
  fail: (err: Error) => void,
): { destroy(): void } {
  const { host, port } = parseAddress(addr);
  const next = new Map<MessageQueue, number>(queues.map((mq) => [mq, 0]));
  let socket: net.Socket;
  let stopped = false;
  let opaque = 1;
  // A broker that goes away (the bench's --restart) is dialled again every 50 ms, and each queue
  // pulled again from the offset its last answer gave: the floor of a restart is the broker's own
  // down time plus at most that.
  const connect = (): void => {
    const s = net.connect({ host, port });
    socket = s;
    s.setNoDelay(true);
    const byOpaque = new Map<number, MessageQueue>();
    const pull = (mq: MessageQueue, offset: number): void => {
      const req = floorPullRequest(group, topic, mq, offset, 0);
      req.opaque = opaque++;
      byOpaque.set(req.opaque, mq);
      s.write(encodeCommand(req));
    };
    const decoder = new FrameDecoder();
    s.on('connect', () => {
      for (const [mq, offset] of next) pull(mq, offset);
    });
    s.on('error', () => {
      // 'close' follows and dials again
    });
    s.on('close', () => {
      if (!stopped) setTimeout(connect, 50);
    });
    s.on('data', (chunk: Buffer) => {
      try {
        decoder.push(chunk, (frame) => {
          const answer = floorPullAnswer(frame, byOpaque, addr);
          if (answer === null) return;
          const { mq, res, nextBeginOffset } = answer;
          next.set(mq, nextBeginOffset);
          // Pull again first: the next long poll is parked while this answer is read.
          pull(mq, nextBeginOffset);
          if (res.code === ResponseCode.SUCCESS && res.body) onBody(res.body, 0, res.body.length);
        });
      } catch (err) {
        fail(err as Error);
      }
    });
  };
  connect();
  return {
    destroy() {
      stopped = true;
      socket.destroy();
    },
  };
}
