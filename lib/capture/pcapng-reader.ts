import { CaptureFileReader, roundMicros } from './capture-file-reader.js';

/** Block types of pcapng (draft-ietf-opsawg-pcapng). */
const SHB = 0x0a0d0d0a;
const IDB = 0x00000001;
const PB_OBSOLETE = 0x00000002;
const SPB = 0x00000003;
const EPB = 0x00000006;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
const MAX_BLOCK = 64 * 1024 * 1024;

interface Interface {
  linkType: number;
  snapLen: number;
  /** Timestamp units per second (if_tsresol, default 10^6). */
  unitsPerSecond: number;
  /** if_tsoffset: seconds added to every timestamp. */
  offsetSeconds: number;
}

/**
 * Streaming reader of pcapng: several sections (each with its own byte order, given by the section
 * header's byte-order magic), several interfaces per section with their own link types and
 * timestamp resolutions, enhanced / simple / obsolete packet blocks. Other blocks are skipped.
 *   block: type u32, total length u32, body, total length u32 (repeated)
 */
export class PcapngReader extends CaptureFileReader {
  private inSection = false;
  private interfaces: Interface[] = [];
  private warnedInterface = new Set<number>();

  protected readRecords(): void {
    const q = this.q;
    while (q.length >= 12) {
      const at = q.position;
      let h = q.peek(12);
      let type = h.readUInt32LE(0);
      if (type === SHB) {
        // The byte order of everything in the section, this block's length included, comes from the magic.
        const bom = h.readUInt32LE(8);
        if (bom === BYTE_ORDER_MAGIC) this.le = true;
        else if (h.readUInt32BE(8) === BYTE_ORDER_MAGIC) this.le = false;
        else return this.fatal(`section header at byte ${at} has a bad byte-order magic`, at);
      } else if (!this.inSection) {
        return this.fatal('not a pcapng file (no section header block first)', at);
      } else if (!this.le) {
        type = h.readUInt32BE(0);
      }
      const len = this.le ? h.readUInt32LE(4) : h.readUInt32BE(4);
      if (len < 12 || len % 4 !== 0 || len > MAX_BLOCK) {
        return this.fatal(`block at byte ${at} has an implausible length ${len} (damaged file)`, at);
      }
      if (q.length < len) return;
      h = q.peek(len);
      const trailer = this.le ? h.readUInt32LE(len - 4) : h.readUInt32BE(len - 4);
      if (trailer !== len) {
        return this.fatal(`block at byte ${at}: trailing length ${trailer} does not match ${len} (damaged file)`, at);
      }
      this.block(type, h.subarray(8, len - 4), at);
      q.skip(len);
    }
  }

  end(): void {
    if (this.failed || this.q.length === 0) return;
    let need = 12;
    if (this.q.length >= 12) {
      const h = this.q.peek(12);
      need = this.le ? h.readUInt32LE(4) : h.readUInt32BE(4);
    }
    this.fatal(
      `capture truncated: block at byte ${this.q.position} (after packet ${this.index}) is cut short (${this.q.length} of ${need} bytes)`,
      this.q.position,
    );
  }

  private u32(b: Buffer, o: number): number {
    return this.le ? b.readUInt32LE(o) : b.readUInt32BE(o);
  }
  private u16(b: Buffer, o: number): number {
    return this.le ? b.readUInt16LE(o) : b.readUInt16BE(o);
  }

  private block(type: number, body: Buffer, at: number): void {
    switch (type) {
      case SHB:
        this.inSection = true;
        this.interfaces = [];
        return;
      case IDB:
        return this.interfaceBlock(body, at);
      case EPB:
      case PB_OBSOLETE: {
        if (body.length < 20) return this.damaged('packet block too short', at);
        const ifId = type === EPB ? this.u32(body, 0) : this.u16(body, 0);
        const iface = this.interfaces[ifId];
        const capLen = this.u32(body, 12);
        const origLen = this.u32(body, 16);
        this.index++;
        if (!iface) return this.noInterface(ifId, at);
        if (capLen > body.length - 20) return this.damaged(`captured length ${capLen} exceeds the block`, at);
        const hi = this.u32(body, 4);
        const lo = this.u32(body, 8);
        this.emit(iface, (hi * 4294967296 + lo) / iface.unitsPerSecond, body.subarray(20, 20 + capLen), origLen, at);
        return;
      }
      case SPB: {
        if (body.length < 4) return this.damaged('simple packet block too short', at);
        const iface = this.interfaces[0];
        this.index++;
        if (!iface) return this.noInterface(0, at);
        const origLen = this.u32(body, 0);
        let capLen = Math.min(origLen, body.length - 4);
        if (iface.snapLen > 0) capLen = Math.min(capLen, iface.snapLen);
        // A simple packet block carries no timestamp.
        this.emit(iface, 0, body.subarray(4, 4 + capLen), origLen, at);
        return;
      }
      default:
        return; // name resolution, statistics, custom blocks...: nothing we need
    }
  }

  private emit(iface: Interface, seconds: number, data: Buffer, origLen: number, at: number): void {
    this.onPacket({
      index: this.index,
      ts: roundMicros(seconds + iface.offsetSeconds),
      linkType: iface.linkType,
      data,
      origLen: Math.max(origLen, data.length),
      fileOffset: at,
    });
  }

  private interfaceBlock(body: Buffer, at: number): void {
    if (body.length < 8) return this.damaged('interface description block too short', at);
    const iface: Interface = {
      linkType: this.u16(body, 0),
      snapLen: this.u32(body, 4),
      unitsPerSecond: 1e6,
      offsetSeconds: 0,
    };
    let p = 8;
    while (p + 4 <= body.length) {
      const code = this.u16(body, p);
      const len = this.u16(body, p + 2);
      p += 4;
      if (code === 0 || p + len > body.length) break;
      if (code === 9 && len >= 1) {
        // if_tsresol: high bit clear = 10^-n seconds, set = 2^-n seconds.
        const v = body[p]!;
        iface.unitsPerSecond = v & 0x80 ? 2 ** (v & 0x7f) : 10 ** v;
      } else if (code === 14 && len >= 8) {
        const hi = this.le ? body.readInt32LE(p + 4) : body.readInt32BE(p);
        const lo = this.le ? body.readUInt32LE(p) : body.readUInt32BE(p + 4);
        iface.offsetSeconds = hi * 4294967296 + lo;
      }
      p += (len + 3) & ~3;
    }
    this.interfaces.push(iface);
  }

  private noInterface(ifId: number, at: number): void {
    if (this.warnedInterface.has(ifId)) return;
    this.warnedInterface.add(ifId);
    this.onProblem({
      message: `packet ${this.index} refers to undeclared interface ${ifId}; its packets are skipped`,
      lost: true,
      packet: this.index,
      offset: at,
    });
  }

  private damaged(what: string, at: number): void {
    this.onProblem({ message: `block at byte ${at}: ${what}; skipped`, lost: true, packet: this.index, offset: at });
  }
}
