/**
 * The writing side of the body-size curve's floor (bench/harness/curve-size.ts), a process of its
 * own so that its CPU is not counted as the reader's:
 *
 *   node size-floor-writer.js TOTAL_BYTES CHUNK_BYTES CONNECTIONS
 *
 * Listens on a loopback port (printed as one line), and to each of CONNECTIONS connections, one after
 * the other, writes TOTAL_BYTES in writes of CHUNK_BYTES (the last one shorter), then ends it; exits
 * after the last.
 */
import * as net from 'node:net';

const [total, chunk, connections] = process.argv.slice(2).map(Number) as [number, number, number];
const block = Buffer.alloc(chunk, 'rocketwire-bench-');
let served = 0;

const server = net.createServer((socket) => {
  socket.on('error', () => socket.destroy());
  let left = total;
  const pump = () => {
    while (left > 0) {
      const n = Math.min(chunk, left);
      left -= n;
      if (!socket.write(n === chunk ? block : block.subarray(0, n))) {
        socket.once('drain', pump);
        return;
      }
    }
    socket.end();
  };
  socket.once('close', () => {
    if (++served >= connections) server.close();
  });
  pump();
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as net.AddressInfo).port}\n`);
});
