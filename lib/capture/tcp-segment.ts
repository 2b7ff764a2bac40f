import { formatIPv6 } from '../../protocol/socket-address.js';
import type { CapturedPacket, ProblemHandler } from './packet.js';

/** LINKTYPE_* values we understand (https://www.tcpdump.org/linktypes.html). */
export const LinkType = {
  NULL: 0,
  ETHERNET: 1,
  /** DLT_RAW as written by some libpcap builds (12 on most systems, 14 on OpenBSD). */
  RAW_12: 12,
  RAW_14: 14,
  RAW: 101,
  LOOP: 108,
  LINUX_SLL: 113,
  IPV4: 228,
  IPV6: 229,
  LINUX_SLL2: 276,
} as const;

export const TcpFlag = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10 } as const;

/** The parts of one TCP segment reassembly needs. */
export interface TcpSegment {
  src: string; // "ip:port" or "[ipv6]:port"
  dst: string;
  srcPort: number;
  dstPort: number;
  seq: number; // uint32
  ack: number; // uint32
  flags: number;
  /** Payload bytes captured (a view into the packet). */
  payload: Buffer;
  /** Payload bytes that were on the wire but not captured (snaplen, damaged packet). */
  missing: number;
}

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_VLAN = new Set([0x8100, 0x88a8, 0x9100]);
/** BSD address families seen in DLT_NULL / DLT_LOOP headers: AF_INET everywhere, AF_INET6 per OS. */
const AF_INET = 2;
const AF_INET6 = new Set([10, 24, 28, 30]);

/**
 * Parses link, IP and TCP headers of one packet. Returns null for packets that are not TCP (or that
 * cannot be parsed; a problem is reported for the ones that lose data we might need).
 */
export class SegmentParser {
  private readonly warnedLinkTypes = new Set<number>();
  /**
   * "a.b.c.d:port" strings by (address, port). A capture holds few endpoints and many packets:
   * re-using the same string objects saves allocation and lets Map lookups use their cached hash.
   */
  private readonly endpoints = new Map<number, string>();

  constructor(private readonly onProblem: ProblemHandler) {}

  parse(pkt: CapturedPacket): TcpSegment | null {
    const d = pkt.data;
    const cut = pkt.origLen - d.length;
    let p: number;
    let ethertype = 0;
    switch (pkt.linkType) {
      case LinkType.ETHERNET: {
        if (d.length < 14) return this.short(pkt, 'Ethernet header');
        ethertype = d.readUInt16BE(12);
        p = 14;
        // 802.1Q / 802.1ad (QinQ) tags: 4 bytes each, the real ethertype follows.
        while (ETHERTYPE_VLAN.has(ethertype)) {
          if (d.length < p + 4) return this.short(pkt, 'VLAN tag');
          ethertype = d.readUInt16BE(p + 2);
          p += 4;
        }
        break;
      }
      case LinkType.LINUX_SLL:
        if (d.length < 16) return this.short(pkt, 'Linux cooked header');
        ethertype = d.readUInt16BE(14);
        p = 16;
        break;
      case LinkType.LINUX_SLL2:
        if (d.length < 20) return this.short(pkt, 'Linux cooked v2 header');
        ethertype = d.readUInt16BE(0);
        p = 20;
        break;
      case LinkType.NULL:
      case LinkType.LOOP: {
        if (d.length < 4) return this.short(pkt, 'loopback header');
        // DLT_NULL stores the family in the capturing host's byte order, DLT_LOOP in network order.
        let fam = pkt.linkType === LinkType.LOOP ? d.readUInt32BE(0) : d.readUInt32LE(0);
        if (pkt.linkType === LinkType.NULL && fam > 0xffff) fam = d.readUInt32BE(0);
        if (fam === AF_INET) ethertype = ETHERTYPE_IPV4;
        else if (AF_INET6.has(fam)) ethertype = ETHERTYPE_IPV6;
        p = 4;
        break;
      }
      case LinkType.RAW:
      case LinkType.RAW_12:
      case LinkType.RAW_14:
      case LinkType.IPV4:
      case LinkType.IPV6: {
        if (d.length < 1) return this.short(pkt, 'IP header');
        const v = d[0]! >> 4;
        ethertype = v === 4 ? ETHERTYPE_IPV4 : v === 6 ? ETHERTYPE_IPV6 : 0;
        p = 0;
        break;
      }
      default:
        if (!this.warnedLinkTypes.has(pkt.linkType)) {
          this.warnedLinkTypes.add(pkt.linkType);
          this.onProblem({
            message: `packet ${pkt.index}: unknown link type ${pkt.linkType}; packets of this link type are skipped`,
            lost: true,
            packet: pkt.index,
          });
        }
        return null;
    }
    if (ethertype === ETHERTYPE_IPV4) return this.ipv4(pkt, d, p, cut);
    if (ethertype === ETHERTYPE_IPV6) return this.ipv6(pkt, d, p, cut);
    return null;
  }

  private ipv4(pkt: CapturedPacket, d: Buffer, p: number, cut: number): TcpSegment | null {
    if (d.length < p + 20) return this.short(pkt, 'IPv4 header');
    const ihl = (d[p]! & 0x0f) * 4;
    if (ihl < 20) return this.bad(pkt, `IPv4 header length ${ihl}`);
    if (d[p + 9] !== 6) return null; // not TCP
    const fragment = d.readUInt16BE(p + 6);
    // More-fragments bit or a fragment offset: we do not reassemble IP fragments.
    if ((fragment & 0x2000) !== 0 || (fragment & 0x1fff) !== 0) {
      this.onProblem({
        message: `packet ${pkt.index}: IPv4 fragment skipped (IP reassembly is not supported)`,
        lost: true,
        packet: pkt.index,
      });
      return null;
    }
    const totalLength = d.readUInt16BE(p + 2);
    // Total length 0 appears in captures of TCP segmentation offload: the captured size is then the truth.
    const end = totalLength === 0 ? d.length + cut : p + totalLength;
    return this.tcp(pkt, d, p + ihl, end, null, null, d.readUInt32BE(p + 12), d.readUInt32BE(p + 16));
  }

  private endpoint4(ip: number, port: number): string {
    const key = ip * 65536 + port;
    let s = this.endpoints.get(key);
    if (s === undefined) {
      if (this.endpoints.size >= 65536) this.endpoints.clear();
      s = `${ip >>> 24}.${(ip >>> 16) & 0xff}.${(ip >>> 8) & 0xff}.${ip & 0xff}:${port}`;
      this.endpoints.set(key, s);
    }
    return s;
  }

  private ipv6(pkt: CapturedPacket, d: Buffer, p: number, cut: number): TcpSegment | null {
    if (d.length < p + 40) return this.short(pkt, 'IPv6 header');
    const payloadLength = d.readUInt16BE(p + 4);
    let next = d[p + 6]!;
    const src = formatIPv6(d, p + 8);
    const dst = formatIPv6(d, p + 24);
    const end = payloadLength === 0 ? d.length + cut : p + 40 + payloadLength;
    p += 40;
    // Walk the extension headers: hop-by-hop 0, routing 43, destination options 60, fragment 44, AH 51.
    for (;;) {
      if (next === 6) break;
      if (next === 0 || next === 43 || next === 60) {
        if (d.length < p + 2) return this.short(pkt, 'IPv6 extension header');
        next = d[p]!;
        p += (d[p + 1]! + 1) * 8;
      } else if (next === 51) {
        if (d.length < p + 2) return this.short(pkt, 'IPv6 extension header');
        next = d[p]!;
        p += (d[p + 1]! + 2) * 4;
      } else if (next === 44) {
        if (d.length < p + 8) return this.short(pkt, 'IPv6 fragment header');
        const off = d.readUInt16BE(p + 2);
        if ((off & 0xfff8) !== 0 || (off & 1) !== 0) {
          this.onProblem({
            message: `packet ${pkt.index}: IPv6 fragment skipped (IP reassembly is not supported)`,
            lost: true,
            packet: pkt.index,
          });
          return null;
        }
        next = d[p]!;
        p += 8;
      } else {
        return null; // not TCP (or ESP, which we cannot read)
      }
    }
    return this.tcp(pkt, d, p, end, `[${src}]`, `[${dst}]`);
  }

  /** The TCP header at p. Addresses: IPv6 text (src/dst), or IPv4 numbers (src4/dst4) when those are null. */
  private tcp(
    pkt: CapturedPacket,
    d: Buffer,
    p: number,
    ipEnd: number,
    src: string | null,
    dst: string | null,
    src4 = 0,
    dst4 = 0,
  ): TcpSegment | null {
    if (d.length < p + 20) return this.short(pkt, 'TCP header');
    const off = (d[p + 12]! >> 4) * 4;
    if (off < 20) return this.bad(pkt, `TCP header length ${off}`);
    if (d.length < p + off) return this.short(pkt, 'TCP header');
    const srcPort = d.readUInt16BE(p);
    const dstPort = d.readUInt16BE(p + 2);
    const start = p + off;
    // Ethernet pads short frames: the IP length, not the captured size, says where the payload ends.
    const stop = Math.min(ipEnd, d.length);
    const payload = stop > start ? d.subarray(start, stop) : d.subarray(start, start);
    const missing = Math.max(0, ipEnd - Math.max(stop, start));
    return {
      src: src === null ? this.endpoint4(src4, srcPort) : `${src}:${srcPort}`,
      dst: dst === null ? this.endpoint4(dst4, dstPort) : `${dst}:${dstPort}`,
      srcPort,
      dstPort,
      seq: d.readUInt32BE(p + 4),
      ack: d.readUInt32BE(p + 8),
      flags: d[p + 13]!,
      payload,
      missing,
    };
  }

  private short(pkt: CapturedPacket, what: string): null {
    // Only worth a word when the packet was cut by the snaplen: the rest is just not TCP/IP.
    if (pkt.origLen > pkt.data.length) {
      this.onProblem({
        message: `packet ${pkt.index}: cut by snaplen inside its ${what} (captured ${pkt.data.length} of ${pkt.origLen} bytes); skipped`,
        lost: true,
        packet: pkt.index,
      });
    }
    return null;
  }

  private bad(pkt: CapturedPacket, what: string): null {
    this.onProblem({
      message: `packet ${pkt.index}: damaged packet (${what}); skipped`,
      lost: true,
      packet: pkt.index,
    });
    return null;
  }
}
