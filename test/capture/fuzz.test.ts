import t from 'tap';
import { encodeCommand } from '../../protocol/index.js';
import { heartbeat, linkAll, pcap, pcapng, pullFound, pullRequest, TcpConnection } from './build-pcap.js';
import { decodeAll } from './helpers.js';

// Damaged captures must end in reported problems, never in an exception escaping the decoder.
// Deterministic: a fixed xorshift seed, so a failure can be replayed.

function capture(): Buffer[] {
  const conn = new TcpConnection({ ip: '10.0.0.5', port: 50000 }, { ip: '10.0.0.1', port: 10911 });
  const pull = pullRequest(2);
  const pkts = [
    ...conn.handshake(),
    ...conn.send(true, encodeCommand(heartbeat(1))),
    ...conn.send(true, encodeCommand(pull)),
    ...conn.send(false, encodeCommand(pullFound(pull, 4, { bodySize: 300 })), 700),
    conn.fin(true),
    conn.fin(false),
  ];
  return [
    pcap(linkAll('ethernet', pkts), { linkType: 1 }),
    pcapng([{ linkType: 1 }], linkAll('ethernet', pkts)),
    Buffer.concat(pkts.map((p) => p.data.subarray(40))),
  ];
}

t.test('random byte damage never throws', async (t) => {
  let seed = 0x1234567;
  const rnd = (n: number): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  let runs = 0;
  for (const original of capture()) {
    for (let i = 0; i < 80; i++) {
      const b = Buffer.from(original);
      const flips = 1 + rnd(8);
      for (let f = 0; f < flips; f++) b[rnd(b.length)] = rnd(256);
      const cut = rnd(4) === 0 ? rnd(b.length) : b.length;
      try {
        decodeAll(b.subarray(0, cut), 1 + rnd(3000));
      } catch (err) {
        t.fail(`run ${runs} threw: ${(err as Error).stack}`);
        return;
      }
      runs++;
    }
  }
  t.equal(runs, 240, 'every damaged capture decoded without an exception');
});
