import { CaptureFileReader, roundMicros } from './capture-file-reader.js';

/** Magic numbers of the classic pcap format (libpcap's savefile.c), as read big-endian. */
export const PCAP_MAGIC_MICRO = 0xa1b2c3d4;
export const PCAP_MAGIC_NANO = 0xa1b23c4d;

/** Largest record we accept: libpcap's own limit for savefiles is 256 KiB; 16 MiB leaves room for odd writers. */
const MAX_RECORD = 16 * 1024 * 1024;

/**
 * Streaming reader of classic pcap files, either byte order, microsecond or nanosecond timestamps.
 *   file header (24): magic u32, version 2+2, thiszone i32, sigfigs u32, snaplen u32, linktype u32
 *   record (16 + n):  ts_sec u32, ts_frac u32, incl_len u32, orig_len u32, n captured bytes
 */
export class PcapReader extends CaptureFileReader {
  private nano = false;
  private linkType = -1;

  protected readRecords(): void {
    const q = this.q;
    if (this.linkType < 0) {
      if (q.length < 24) return;
      const h = q.peek(24);
      const be = h.readUInt32BE(0);
      const le = h.readUInt32LE(0);
      if (be === PCAP_MAGIC_MICRO || be === PCAP_MAGIC_NANO) this.le = false;
      else if (le === PCAP_MAGIC_MICRO || le === PCAP_MAGIC_NANO) this.le = true;
      else return this.fatal('not a pcap file (bad magic number)', 0);
      this.nano = (this.le ? le : be) === PCAP_MAGIC_NANO;
      // The upper bits of the link-type field carry FCS information (pcap-savefile(5)).
      this.linkType = (this.le ? h.readUInt32LE(20) : h.readUInt32BE(20)) & 0xffff;
      q.skip(24);
    }
    const le = this.le;
    while (q.length >= 16) {
      const h = q.peek(16);
      const sec = le ? h.readUInt32LE(0) : h.readUInt32BE(0);
      const frac = le ? h.readUInt32LE(4) : h.readUInt32BE(4);
      const incl = le ? h.readUInt32LE(8) : h.readUInt32BE(8);
      const orig = le ? h.readUInt32LE(12) : h.readUInt32BE(12);
      if (incl > MAX_RECORD) {
        return this.fatal(`packet ${this.index + 1}: record length ${incl} is implausible (damaged file)`, q.position);
      }
      if (q.length < 16 + incl) return;
      const at = q.position;
      const rec = q.peek(16 + incl);
      this.index++;
      this.onPacket({
        index: this.index,
        ts: roundMicros(this.nano ? sec + frac / 1e9 : sec + frac / 1e6),
        linkType: this.linkType,
        data: rec.subarray(16),
        origLen: Math.max(orig, incl),
        fileOffset: at,
      });
      q.skip(16 + incl);
    }
  }

  end(): void {
    if (this.failed) return;
    if (this.linkType < 0) {
      if (this.q.length > 0)
        this.fatal(`capture truncated: pcap file header cut short (${this.q.length} of 24 bytes)`, 0);
      return;
    }
    if (this.q.length > 0) {
      let need = 16;
      if (this.q.length >= 16) {
        const h = this.q.peek(16);
        need = 16 + (this.le ? h.readUInt32LE(8) : h.readUInt32BE(8));
      }
      this.fatal(
        `capture truncated: packet ${this.index + 1} at byte ${this.q.position} is cut short (${this.q.length} of ${need} bytes)`,
        this.q.position,
      );
    }
  }
}
