import t from 'tap';
import { TcpStream, StreamFramer } from '../../lib/capture/index.js';
import { createRequest, encodeCommand } from '../../protocol/index.js';

function recorder(): { events: string[]; stream: (o?: ConstructorParameters<typeof TcpStream>[1]) => TcpStream } {
  const events: string[] = [];
  return {
    events,
    stream: (o) =>
      new TcpStream(
        {
          data: (b) => events.push(`data ${b.toString()}`),
          gap: (n) => events.push(`gap ${n}`),
          end: () => events.push('end'),
        },
        o,
      ),
  };
}
const b = (s: string): Buffer => Buffer.from(s);

t.test('in order, out of order, duplicates and overlaps across the 2^32 wrap', async (t) => {
  const r = recorder();
  const s = r.stream();
  const isn = 0xfffffffa;
  s.syn(isn); // data starts at isn + 1 = 0xfffffffb
  s.segment(0xfffffffb, b('abc'), 0, false);
  s.segment(0x00000001, b('ghi'), 0, false); // ahead: held
  s.segment(0xfffffffe, b('def'), 0, false); // crosses the wrap, fills the hole
  s.segment(0xfffffffb, b('abc'), 0, false); // exact retransmission
  s.segment(0x00000000, b('fghij'), 0, false); // overlaps: only "j" is new
  s.segment(0x00000005, b('k'), 0, true);
  t.same(r.events, ['data abc', 'data def', 'data ghi', 'data j', 'data k', 'end']);
  t.equal(s.retransmittedBytes, 3);
});

t.test('a hole the peer has acknowledged is a gap at once', async (t) => {
  const r = recorder();
  const s = r.stream();
  s.segment(100, b('aaaa'), 0, false);
  s.segment(110, b('cccc'), 0, false); // 104..109 missing
  t.same(r.events, ['data aaaa']);
  s.peerAck(106); // the receiver got up to 106, the hole's start will never be resent
  t.same(r.events, ['data aaaa', 'gap 2']);
  s.segment(106, b('bbbb'), 0, false); // the rest of the hole arrives
  t.same(r.events, ['data aaaa', 'gap 2', 'data bbbb', 'data cccc']);
});

t.test('held bytes are bounded; close reports holes; missing (snaplen) bytes become gaps', async (t) => {
  const r = recorder();
  const s = r.stream({ maxBufferedBytes: 8 });
  s.segment(0, b('a'), 0, false);
  s.segment(5, b('xxxx'), 0, false);
  s.segment(9, b('yyyyy'), 0, false); // 9 held bytes > 8: give up on the hole 1..4
  t.same(r.events, ['data a', 'gap 4', 'data xxxx', 'data yyyyy']);
  s.segment(14, b('zz'), 3, false);
  t.same(r.events.slice(-2), ['data zz', 'gap 3']);
  s.segment(30, b('late'), 0, false);
  s.close();
  t.same(r.events.slice(-3), ['gap 11', 'data late', 'end']);
  t.equal(s.bufferedBytes, 0);
});

t.test('StreamFramer: gap inside a frame of known length keeps the next frame in step', async (t) => {
  const frames = [1, 2, 3].map((o) => encodeCommand(createRequest(30, { opaque: o, body: Buffer.alloc(100, o) })));
  const got: number[] = [];
  const problems: string[] = [];
  const f = new StreamFramer(
    { frame: (c) => got.push(c.opaque), problem: (m, _o, lost) => lost && problems.push(m) },
    { start: 'sync' },
  );
  f.push(frames[0]!);
  f.push(frames[1]!.subarray(0, 50));
  f.gap(40);
  f.push(frames[1]!.subarray(90));
  f.push(frames[2]!);
  t.same(got, [1, 3]);
  t.same(problems, [
    `40 bytes missing at stream byte ${frames[0]!.length + 50}, inside the frame at byte ${frames[0]!.length} (${frames[1]!.length} bytes), which is skipped`,
  ]);
  t.equal(f.state, 'sync', 'no resynchronisation needed');
});

t.test('StreamFramer: damage, then the next valid header is found', async (t) => {
  const a = encodeCommand(createRequest(30, { opaque: 1 }));
  const c = encodeCommand(createRequest(30, { opaque: 2, serializeType: 'ROCKETMQ', extFields: { k: 'v' } }));
  const got: number[] = [];
  const problems: string[] = [];
  const f = new StreamFramer(
    { frame: (cmd) => got.push(cmd.opaque), problem: (m) => problems.push(m) },
    { start: 'sync' },
  );
  // A frame head that claims serialize type 9, garbage, then a good binary-header frame.
  f.push(Buffer.concat([a, Buffer.from('0000002009000010', 'hex'), Buffer.from('garbage\u0000\u0000\u0000'), c]));
  t.same(got, [1, 2]);
  t.same(problems, [`damaged frame at stream byte ${a.length}: unknown serialize type 9; resynchronising`]);
});
