import net from 'node:net';
import { once } from 'node:events';
import { FrameDecoder, decodeCommand, type RemotingCommand } from '../../protocol/index.js';

/**
 * A hostile-peer test double: a raw TCP server on 127.0.0.1:0 that decodes what the client sends and
 * lets each test script exactly which bytes go back (out of order, split, garbage, nothing at all).
 */
export interface ScriptedPeer {
  socket: net.Socket;
  /** Requests received so far, in order. */
  received: RemotingCommand[];
  /** Resolves when at least `n` requests have arrived. */
  waitFor(n: number): Promise<RemotingCommand[]>;
}

export interface ScriptedServer {
  port: number;
  addr: string;
  peers: ScriptedPeer[];
  /** Resolves with the next (or an already) accepted peer. */
  nextPeer(): Promise<ScriptedPeer>;
  close(): Promise<void>;
}

export async function scriptedServer(
  onRequest?: (req: RemotingCommand, peer: ScriptedPeer) => void,
  port = 0,
): Promise<ScriptedServer> {
  const peers: ScriptedPeer[] = [];
  const waiting: ((p: ScriptedPeer) => void)[] = [];
  let taken = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const decoder = new FrameDecoder();
    const watchers: { n: number; resolve: (r: RemotingCommand[]) => void }[] = [];
    const peer: ScriptedPeer = {
      socket,
      received: [],
      waitFor(n) {
        if (peer.received.length >= n) return Promise.resolve(peer.received);
        return new Promise((resolve) => watchers.push({ n, resolve }));
      },
    };
    socket.on('data', (chunk) => {
      try {
        decoder.push(chunk, (frame) => {
          const cmd = decodeCommand(Buffer.from(frame));
          peer.received.push(cmd);
          onRequest?.(cmd, peer);
          for (const w of watchers.splice(0)) {
            if (peer.received.length >= w.n) w.resolve(peer.received);
            else watchers.push(w);
          }
        });
      } catch {
        socket.destroy();
      }
    });
    peers.push(peer);
    const w = waiting.shift();
    if (w) {
      taken++;
      w(peer);
    }
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const actualPort = (server.address() as net.AddressInfo).port;
  return {
    port: actualPort,
    addr: `127.0.0.1:${actualPort}`,
    peers,
    nextPeer() {
      if (taken < peers.length) return Promise.resolve(peers[taken++]!);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port that was free a moment ago (nothing listens on it). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
