import type net from 'node:net';
import t from 'tap';
import { EARLY_FLUSH_FRAMES, OutboundQueue } from '../../lib/remoting/outbound-queue.js';

// Stands in for the socket: what a corked net.Socket does with writes. Each uncork that brings the
// cork count to zero hands everything written meanwhile to the kernel in one writev.
class CorkingSocket {
  corks = 0;
  pending: string[] = [];
  writevs: string[][] = [];
  writableLength = 0;
  cork(): void {
    this.corks++;
  }
  uncork(): void {
    if (this.corks === 0) return;
    if (--this.corks === 0) this.flush();
  }
  write(chunk: Buffer, _cb?: () => void): boolean {
    this.pending.push(chunk.toString());
    if (this.corks === 0) this.flush();
    return true;
  }
  private flush(): void {
    if (this.pending.length > 0) this.writevs.push(this.pending);
    this.pending = [];
  }
}

// A server's end: early flushes on (RemotingConnection gives them to connections with a budget).
function queueOn(socket: CorkingSocket, early = EARLY_FLUSH_FRAMES): OutboundQueue {
  return new OutboundQueue(socket as unknown as net.Socket, '127.0.0.1:1', 1 << 20, 1000, undefined, early);
}

const frame = (i: number): Buffer => Buffer.from(`f${i}`);
const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('the first frames of a turn leave at once; the rest of the turn leaves in one write at its end', async (t) => {
  const socket = new CorkingSocket();
  const q = queueOn(socket);
  for (let i = 0; i < 10; i++) q.write(i, 11, frame(i), null, undefined);
  const early = Array.from({ length: EARLY_FLUSH_FRAMES }, (_, i) => `f${i}`);
  t.same(
    socket.writevs,
    [early],
    `the first ${EARLY_FLUSH_FRAMES} frames were handed to the kernel before the turn ended`,
  );
  await endOfTurn();
  t.same(socket.writevs.length, 2, 'the other frames left together when the turn ended');
  t.same(
    socket.writevs[1],
    Array.from({ length: 10 - EARLY_FLUSH_FRAMES }, (_, i) => `f${i + EARLY_FLUSH_FRAMES}`),
  );
  t.equal(socket.corks, 0, 'the socket is left uncorked');

  // The next turn starts over: its first frames leave at once again.
  for (let i = 10; i < 13; i++) q.write(i, 11, frame(i), null, undefined);
  t.equal(socket.writevs.length, 3);
  t.same(socket.writevs[2]!.length, EARLY_FLUSH_FRAMES);
  await endOfTurn();
  t.same(
    socket.writevs.flat(),
    Array.from({ length: 13 }, (_, i) => `f${i}`),
    'every frame went out once, in order',
  );
});

t.test("without early flushes (a client's end) every frame of a turn leaves in one write at its end", async (t) => {
  const socket = new CorkingSocket();
  const q = queueOn(socket, 0);
  for (let i = 0; i < 6; i++) q.write(i, 11, frame(i), null, undefined);
  t.same(socket.writevs, [], 'nothing written while the turn runs');
  await endOfTurn();
  t.same(socket.writevs, [['f0', 'f1', 'f2', 'f3', 'f4', 'f5']]);
});

t.test('a lone frame in a turn waits for the end of the turn, header and body in one write', async (t) => {
  const socket = new CorkingSocket();
  const q = queueOn(socket);
  q.write(1, 11, Buffer.from('head'), Buffer.from('body'), undefined);
  t.same(socket.writevs, [], 'nothing written while the turn runs');
  await endOfTurn();
  t.same(socket.writevs, [['head', 'body']]);
});
