/**
 * Test-fixture builder: synthetic IPv4/IPv6 TCP packets carrying real encoded frames, wrapped in
 * Ethernet (with VLAN tags), Linux cooked v1/v2, BSD loopback or raw IP, written as pcap (either
 * byte order, micro or nano seconds) or pcapng (several interfaces, either byte order).
 */
import {
  createRequest,
  createResponse,
  encodeCommand,
  encodeStoredMessage,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';

export const SYN = 0x02;
export const ACK = 0x10;
export const FIN = 0x01;
export const RST = 0x04;
export const PSH = 0x08;

function ipBytes(addr: string): Buffer {
  if (addr.includes(':')) {
    const [head, tail] = addr.split('::') as [string, string | undefined];
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
    const b = Buffer.alloc(16);
    for (const [i, g] of groups.entries()) b.writeUInt16BE(parseInt(g || '0', 16), i * 2);
    return b;
  }
  return Buffer.from(addr.split('.').map(Number));
}

export interface TcpInit {
  src: string;
  dst: string;
  sport: number;
  dport: number;
  seq: number;
  ack?: number;
  flags: number;
  payload?: Buffer;
  /** IPv4 options bytes (multiple of 4). */
  ipOptions?: Buffer;
  /** IPv6: a hop-by-hop extension header before TCP. */
  hopByHop?: boolean;
  /** IPv4 fragment fields (flags+offset word). */
  fragment?: number;
}

/** An IP packet (v4 or v6 by the address form) holding one TCP segment. */
export function ipTcp(t: TcpInit): Buffer {
  const payload = t.payload ?? Buffer.alloc(0);
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(t.sport, 0);
  tcp.writeUInt16BE(t.dport, 2);
  tcp.writeUInt32BE(t.seq >>> 0, 4);
  tcp.writeUInt32BE((t.ack ?? 0) >>> 0, 8);
  tcp[12] = 5 << 4;
  tcp[13] = t.flags;
  tcp.writeUInt16BE(65535, 14);
  if (t.src.includes(':')) {
    const ext = t.hopByHop ? Buffer.from([6, 0, 1, 4, 0, 0, 0, 0]) : Buffer.alloc(0);
    const h = Buffer.alloc(40);
    h[0] = 0x60;
    h.writeUInt16BE(ext.length + 20 + payload.length, 4);
    h[6] = t.hopByHop ? 0 : 6;
    h[7] = 64;
    ipBytes(t.src).copy(h, 8);
    ipBytes(t.dst).copy(h, 24);
    return Buffer.concat([h, ext, tcp, payload]);
  }
  const opts = t.ipOptions ?? Buffer.alloc(0);
  const h = Buffer.alloc(20 + opts.length);
  h[0] = 0x40 | ((20 + opts.length) / 4);
  h.writeUInt16BE(h.length + 20 + payload.length, 2);
  h.writeUInt16BE(t.fragment ?? 0x4000, 6);
  h[8] = 64;
  h[9] = 6;
  ipBytes(t.src).copy(h, 12);
  ipBytes(t.dst).copy(h, 16);
  opts.copy(h, 20);
  return Buffer.concat([h, tcp, payload]);
}

export type Link = 'ethernet' | 'vlan' | 'qinq' | 'sll' | 'sll2' | 'null' | 'loop' | 'raw';
export const LINKTYPE: Record<Link, number> = {
  ethernet: 1,
  vlan: 1,
  qinq: 1,
  sll: 113,
  sll2: 276,
  null: 0,
  loop: 108,
  raw: 101,
};

/** Wrap an IP packet in a link-layer header. */
export function link(kind: Link, ip: Buffer): Buffer {
  const v6 = ip[0]! >> 4 === 6;
  const ethertype = v6 ? 0x86dd : 0x0800;
  const mac = Buffer.from('020000000001020000000002', 'hex');
  switch (kind) {
    case 'ethernet': {
      const h = Buffer.alloc(2);
      h.writeUInt16BE(ethertype);
      // Ethernet pads frames to 60 bytes: the IP length must win over the captured length.
      const frame = Buffer.concat([mac, h, ip]);
      return frame.length < 60 ? Buffer.concat([frame, Buffer.alloc(60 - frame.length, 0xee)]) : frame;
    }
    case 'vlan':
    case 'qinq': {
      const tags = kind === 'vlan' ? ['8100', '0064'] : ['88a8', '0010', '8100', '0064'];
      const t = Buffer.from(tags.join(''), 'hex');
      const h = Buffer.alloc(2);
      h.writeUInt16BE(ethertype);
      return Buffer.concat([mac, t, h, ip]);
    }
    case 'sll': {
      const h = Buffer.alloc(16);
      h.writeUInt16BE(0, 0); // packet type: to us
      h.writeUInt16BE(772, 2); // ARPHRD_LOOPBACK
      h.writeUInt16BE(6, 4);
      h.writeUInt16BE(ethertype, 14);
      return Buffer.concat([h, ip]);
    }
    case 'sll2': {
      const h = Buffer.alloc(20);
      h.writeUInt16BE(ethertype, 0);
      h.writeUInt32BE(1, 4);
      h.writeUInt16BE(772, 8);
      h[11] = 6;
      return Buffer.concat([h, ip]);
    }
    case 'null': {
      const h = Buffer.alloc(4);
      h.writeUInt32LE(v6 ? 30 : 2); // host byte order (little-endian machine), AF_INET6 = 30 on macOS
      return Buffer.concat([h, ip]);
    }
    case 'loop': {
      const h = Buffer.alloc(4);
      h.writeUInt32BE(v6 ? 24 : 2);
      return Buffer.concat([h, ip]);
    }
    case 'raw':
      return ip;
  }
}

export interface Packet {
  ts: number;
  data: Buffer;
  /** Wire length when the capture cut the packet. */
  origLen?: number;
  /** pcapng interface. */
  iface?: number;
}

/** u32/u16 field writers in the file's byte order. */
function writers(be: boolean): { u32: (v: number) => Buffer; u16: (v: number) => Buffer } {
  return {
    u32: (v) => {
      const b = Buffer.alloc(4);
      if (be) b.writeUInt32BE(v >>> 0);
      else b.writeUInt32LE(v >>> 0);
      return b;
    },
    u16: (v) => {
      const b = Buffer.alloc(2);
      if (be) b.writeUInt16BE(v);
      else b.writeUInt16LE(v);
      return b;
    },
  };
}

export interface PcapOptions {
  linkType: number;
  bigEndian?: boolean;
  nano?: boolean;
  snaplen?: number;
}

/** A classic pcap file. */
export function pcap(packets: Packet[], o: PcapOptions): Buffer {
  const { u32, u16 } = writers(o.bigEndian ?? false);
  const parts: Buffer[] = [
    u32(o.nano ? 0xa1b23c4d : 0xa1b2c3d4),
    u16(2),
    u16(4),
    u32(0),
    u32(0),
    u32(o.snaplen ?? 262144),
    u32(o.linkType),
  ];
  for (const p of packets) {
    const sec = Math.floor(p.ts);
    const frac = Math.round((p.ts - sec) * (o.nano ? 1e9 : 1e6));
    parts.push(u32(sec), u32(frac), u32(p.data.length), u32(p.origLen ?? p.data.length), p.data);
  }
  return Buffer.concat(parts);
}

export interface PcapngInterface {
  linkType: number;
  /** if_tsresol byte (6 = microseconds, 9 = nanoseconds, 0x80|n = 2^-n). */
  tsresol?: number;
  snaplen?: number;
}

/** A pcapng file: one section, the given interfaces, enhanced packet blocks (or simple ones). */
export function pcapng(
  interfaces: PcapngInterface[],
  packets: Packet[],
  o: { bigEndian?: boolean; simple?: boolean; extraBlocks?: boolean } = {},
): Buffer {
  const { u32, u16 } = writers(o.bigEndian ?? false);
  const pad = (b: Buffer): Buffer => (b.length % 4 === 0 ? b : Buffer.concat([b, Buffer.alloc(4 - (b.length % 4))]));
  const block = (type: number, body: Buffer): Buffer => {
    const b = pad(body);
    return Buffer.concat([u32(type), u32(b.length + 12), b, u32(b.length + 12)]);
  };
  const parts: Buffer[] = [];
  parts.push(block(0x0a0d0d0a, Buffer.concat([u32(0x1a2b3c4d), u16(1), u16(0), Buffer.alloc(8, 0xff)])));
  for (const i of interfaces) {
    const opts: Buffer[] = [];
    if (i.tsresol !== undefined) opts.push(u16(9), u16(1), Buffer.from([i.tsresol, 0, 0, 0]));
    opts.push(u16(0), u16(0));
    parts.push(block(1, Buffer.concat([u16(i.linkType), u16(0), u32(i.snaplen ?? 262144), ...opts])));
  }
  if (o.extraBlocks) {
    // A name-resolution block and a custom block: readers must skip them.
    parts.push(block(4, Buffer.from([0, 0, 0, 0])));
    parts.push(block(0x00000bad, Buffer.from('custom data!')));
  }
  for (const p of packets) {
    const iface = interfaces[p.iface ?? 0]!;
    const res = iface.tsresol ?? 6;
    const units = res & 0x80 ? 2 ** (res & 0x7f) : 10 ** res;
    const t = BigInt(Math.floor(p.ts)) * BigInt(units) + BigInt(Math.round((p.ts - Math.floor(p.ts)) * units));
    if (o.simple) {
      parts.push(block(3, Buffer.concat([u32(p.origLen ?? p.data.length), p.data])));
    } else {
      parts.push(
        block(
          6,
          Buffer.concat([
            u32(p.iface ?? 0),
            u32(Number(t >> 32n)),
            u32(Number(t & 0xffffffffn)),
            u32(p.data.length),
            u32(p.origLen ?? p.data.length),
            p.data,
          ]),
        ),
      );
    }
  }
  return Buffer.concat(parts);
}

/** One TCP connection: hands out IP packets with correct sequence numbers in both directions. */
export class TcpConnection {
  clientSeq: number;
  serverSeq: number;
  ts: number;

  constructor(
    readonly client: { ip: string; port: number },
    readonly server: { ip: string; port: number },
    o: { clientIsn?: number; serverIsn?: number; ts?: number } = {},
  ) {
    this.clientSeq = o.clientIsn ?? 1000;
    this.serverSeq = o.serverIsn ?? 5000;
    this.ts = o.ts ?? 1700000000;
  }

  private tick(): number {
    this.ts = Math.round((this.ts + 0.001) * 1e6) / 1e6;
    return this.ts;
  }

  private pkt(fromClient: boolean, flags: number, payload?: Buffer): Packet {
    const a = fromClient ? this.client : this.server;
    const b = fromClient ? this.server : this.client;
    const seq = fromClient ? this.clientSeq : this.serverSeq;
    const ack = fromClient ? this.serverSeq : this.clientSeq;
    const ip = ipTcp({
      src: a.ip,
      dst: b.ip,
      sport: a.port,
      dport: b.port,
      seq,
      ack,
      flags,
      ...(payload ? { payload } : {}),
    });
    return { ts: this.tick(), data: ip };
  }

  handshake(): Packet[] {
    const out = [this.pkt(true, SYN)];
    this.clientSeq = (this.clientSeq + 1) >>> 0;
    out.push(this.pkt(false, SYN | ACK));
    this.serverSeq = (this.serverSeq + 1) >>> 0;
    out.push(this.pkt(true, ACK));
    return out;
  }

  /** Send bytes in segments of at most `mss` bytes. */
  send(fromClient: boolean, bytes: Buffer, mss = 1460): Packet[] {
    const out: Packet[] = [];
    for (let i = 0; i < bytes.length; i += mss) {
      const part = bytes.subarray(i, Math.min(bytes.length, i + mss));
      out.push(this.pkt(fromClient, ACK | PSH, part));
      if (fromClient) this.clientSeq = (this.clientSeq + part.length) >>> 0;
      else this.serverSeq = (this.serverSeq + part.length) >>> 0;
    }
    return out;
  }

  /** A bare ACK from one side (acknowledging everything the other side sent). */
  ack(fromClient: boolean): Packet {
    return this.pkt(fromClient, ACK);
  }

  fin(fromClient: boolean): Packet {
    const p = this.pkt(fromClient, FIN | ACK);
    if (fromClient) this.clientSeq = (this.clientSeq + 1) >>> 0;
    else this.serverSeq = (this.serverSeq + 1) >>> 0;
    return p;
  }

  rst(fromClient: boolean): Packet {
    return this.pkt(fromClient, RST | ACK);
  }
}

/** Wrap every packet's IP bytes in a link header. */
export function linkAll(kind: Link, packets: Packet[]): Packet[] {
  return packets.map((p) => ({ ...p, data: link(kind, p.data) }));
}

// ---- frames ---------------------------------------------------------------------------------

export function pullRequest(
  opaque: number,
  o: {
    topic?: string;
    group?: string;
    queueId?: number;
    queueOffset?: number;
    commitOffset?: number;
    sysFlag?: number;
  } = {},
): RemotingCommand {
  return createRequest(RequestCode.PULL_MESSAGE, {
    opaque,
    extFields: {
      consumerGroup: o.group ?? 'cg1',
      topic: o.topic ?? 'TopicTest',
      queueId: String(o.queueId ?? 0),
      queueOffset: String(o.queueOffset ?? 0),
      maxMsgNums: '32',
      sysFlag: String(o.sysFlag ?? 3),
      commitOffset: String(o.commitOffset ?? 0),
      suspendTimeoutMillis: '15000',
      subVersion: '1700000000000',
      expressionType: 'TAG',
    },
  });
}

/** Stored-message records as a pull response body carries them. */
export function storedMessages(
  n: number,
  o: { topic?: string; queueId?: number; firstOffset?: number; bodySize?: number } = {},
): Buffer {
  const recs: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const off = (o.firstOffset ?? 0) + i;
    recs.push(
      encodeStoredMessage({
        topic: o.topic ?? 'TopicTest',
        queueId: o.queueId ?? 0,
        queueOffset: off,
        commitLogOffset: 1000 * off,
        bornTimestamp: 1700000000000 + off,
        bornHost: '10.0.0.5:50000',
        storeTimestamp: 1700000000100 + off,
        storeHost: '10.0.0.1:10911',
        body: Buffer.alloc(o.bodySize ?? 16, 0x41 + (off % 26)),
        properties: { TAGS: 'TagA', UNIQ_KEY: `UNIQ${String(off).padStart(8, '0')}` },
      }),
    );
  }
  return Buffer.concat(recs);
}

export function pullFound(
  request: RemotingCommand,
  n: number,
  o: { bodySize?: number; firstOffset?: number } = {},
): RemotingCommand {
  const first = o.firstOffset ?? Number(request.extFields?.queueOffset ?? 0);
  return createResponse(request, ResponseCode.SUCCESS, {
    remark: 'FOUND',
    extFields: {
      nextBeginOffset: String(first + n),
      minOffset: '0',
      maxOffset: String(first + n),
      suggestWhichBrokerId: '0',
    },
    body: storedMessages(n, {
      firstOffset: first,
      topic: request.extFields?.topic ?? 'TopicTest',
      queueId: Number(request.extFields?.queueId ?? 0),
      ...(o.bodySize !== undefined ? { bodySize: o.bodySize } : {}),
    }),
  });
}

export function heartbeat(opaque: number): RemotingCommand {
  return createRequest(RequestCode.HEART_BEAT, {
    opaque,
    body: Buffer.from('{"clientID":"10.0.0.5@1","consumerDataSet":[{"groupName":"cg1"}],"producerDataSet":[]}'),
  });
}

export { createRequest, createResponse, encodeCommand };
