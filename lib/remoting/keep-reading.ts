import type net from 'node:net';

/** Write errors that mean the peer is gone (it closed, or reset the connection), not a fault of ours. */
const PEER_GONE = new Set(['EPIPE', 'ECONNRESET']);

/**
 * Keeps a server socket reading after a write to a peer that has gone fails. Node destroys a
 * socket whose write fails, which throws away what the peer sent before it went and the kernel
 * still holds unread. A peer that sends requests and closes without waiting for the answers loses
 * them that way: the Go client (rocketmq-client-go v2) sends its oneway sends, its offset commits
 * at shutdown and its transaction ends without the oneway flag, so the broker answers them, and
 * its close makes the second of those answers fail. Apache's broker serves every such request
 * (Netty reads a channel ahead of the answers, on its own thread). Here a failed write to a gone
 * peer counts as written: the socket reads on to its end of stream or read error, which closes it
 * as before, and each request read is served, its answer dropped.
 *
 * `onPeerGone` is told the first such failure.
 */
export function keepReadingWhenPeerGone(socket: net.Socket, onPeerGone: (err: Error) => void): void {
  let told = false;
  const swallow =
    (cb: (error?: Error | null) => void) =>
    (err?: Error | null): void => {
      const code = (err as NodeJS.ErrnoException | null | undefined)?.code;
      if (err && code !== undefined && PEER_GONE.has(code)) {
        if (!told) {
          told = true;
          onPeerGone(err);
        }
        cb();
        return;
      }
      cb(err);
    };
  const write = socket._write;
  const writev = socket._writev;
  socket._write = function (chunk, encoding, cb) {
    write.call(this, chunk, encoding, swallow(cb));
  };
  if (writev !== undefined) {
    socket._writev = function (chunks, cb) {
      writev.call(this, chunks, swallow(cb));
    };
  }
}
