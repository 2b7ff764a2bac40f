import * as fs from 'node:fs';
import {
  BLANK_MAGIC_CODE,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
  MessageRecordOffset,
  MessageSysFlag,
  messageBodyCrc,
  readInt64,
  storedMessageSize,
} from '../../protocol/internal.js';

/*
 * Reading a commit-log segment back at start: each record's layout and body CRC checked, a damaged
 * stretch skipped to the next record that checks out (recovery), whole reads of a file region.
 */

/** Smallest record: IPv4 hosts, empty body, topic and properties. */
export const MIN_RECORD = storedMessageSize(0, 0, 0);

/**
 * Layout and body CRC check of the record in buf[at, at + size) (CRC-32 of the body masked with
 * 0x7FFFFFFF, as Java stores it). Works on offsets rather than a subarray: recovery calls it once
 * per stored record.
 */
export function recordCrcOk(buf: Buffer, at = 0, size = buf.length - at): boolean {
  const end = at + size;
  const sysFlag = buf.readInt32BE(at + MessageRecordOffset.SYSFLAG);
  const bornHost = sysFlag & MessageSysFlag.BORNHOST_V6_FLAG ? 20 : 8;
  const storeHost = sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG ? 20 : 8;
  // BORNHOST, STORETIMESTAMP, STOREHOST, RECONSUMETIMES, PREPARED TRANSACTION OFFSET, then BODY.
  const p = at + MessageRecordOffset.BORNHOST + bornHost + 8 + storeHost + 4 + 8;
  if (p + 4 > end) return false;
  const bodyLen = buf.readInt32BE(p);
  if (bodyLen < 0 || p + 4 + bodyLen > end) return false;
  // The CRC covers the body only: check that topic and properties fill the rest exactly, so that
  // damage to their lengths is found too (the decoder would refuse the record).
  let q = p + 4 + bodyLen;
  const v2 = buf.readInt32BE(at + MessageRecordOffset.MAGICCODE) === MESSAGE_MAGIC_CODE_V2;
  if (q + (v2 ? 2 : 1) > end) return false;
  const topicLen = v2 ? buf.readInt16BE(q) : buf.readInt8(q);
  q += (v2 ? 2 : 1) + topicLen;
  if (topicLen <= 0 || q + 2 > end) return false;
  if (q + 2 + buf.readUInt16BE(q) !== end) return false;
  return messageBodyCrc(buf, p + 4, p + 4 + bodyLen) === buf.readInt32BE(at + MessageRecordOffset.BODYCRC);
}

const MAGIC_BYTES = [MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2, BLANK_MAGIC_CODE].map((m) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(m, 0);
  return b;
});

/**
 * What is at position p of a segment (`len` bytes of `buf`, the segment at commit-log offset
 * `base`): the size of a record whose size, magic, offset field and body CRC all verify; 0 for the
 * blank filler that ends a segment (its size must reach the segment's end exactly); -1 otherwise.
 */
function checkAt(buf: Buffer, p: number, len: number, base: number, segmentSize: number): number {
  if (p + 8 > len) return -1;
  const size = buf.readInt32BE(p);
  const magic = buf.readInt32BE(p + 4);
  if (magic === BLANK_MAGIC_CODE) return size === segmentSize - p ? 0 : -1;
  if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) return -1;
  if (size < MIN_RECORD || p + size > len) return -1;
  if (readInt64(buf, p + MessageRecordOffset.PHYSICALOFFSET) !== base + p) return -1;
  if (!recordCrcOk(buf, p, size)) return -1;
  return size;
}

/**
 * Scan a segment: every record is checked (checkAt); at a record that fails, look for the next
 * offset where one verifies (a magic code found by indexOf, then every check) and mark the stretch
 * between as damaged. The magic, the record's own commit-log offset and the CRC together make a
 * false match practically impossible. `end` is the end of the last valid record; `sealed` when a
 * blank filler closes the segment.
 */
export function scanSegment(
  buf: Buffer,
  len: number,
  base: number,
  segmentSize: number,
): { end: number; records: number; sealed: boolean; damaged: { from: number; to: number }[]; lastRecord: number } {
  const damaged: { from: number; to: number }[] = [];
  let p = 0;
  let end = 0;
  let records = 0;
  let lastRecord = -1;
  while (p + 8 <= len) {
    const r = checkAt(buf, p, len, base, segmentSize);
    if (r > 0) {
      lastRecord = p;
      p += r;
      end = p;
      records++;
      continue;
    }
    if (r === 0) return { end, records, sealed: true, damaged, lastRecord };
    const next = resync(buf, p + 1, len, base, segmentSize);
    if (next < 0) break;
    damaged.push({ from: base + p, to: base + next });
    p = next;
  }
  return { end, records, sealed: false, damaged, lastRecord };
}

/** The first position ≥ from where checkAt finds a record or the closing filler, or -1. */
function resync(buf: Buffer, from: number, len: number, base: number, segmentSize: number): number {
  const view = buf.subarray(0, len);
  let q = from;
  while (q + 8 <= len) {
    let best = -1;
    for (const m of MAGIC_BYTES) {
      const at = view.indexOf(m, q + 4);
      if (at >= 0 && (best < 0 || at < best)) best = at;
    }
    if (best < 0) return -1;
    const cand = best - 4;
    if (checkAt(buf, cand, len, base, segmentSize) >= 0) return cand;
    q = cand + 1;
  }
  return -1;
}

/** Reads up to `len` bytes at file position `at` into `buf` (from 0); returns how many were read. */
export function readFully(fd: number, buf: Buffer, at: number, len: number): number {
  let done = 0;
  while (done < len) {
    const n = fs.readSync(fd, buf, done, len - done, at + done);
    if (n <= 0) break;
    done += n;
  }
  return done;
}

/** What CommitLog.open found. Offsets are commit-log offsets. */
export interface CommitLogScan {
  /** Records that verified. */
  records: number;
  /** Damaged stretches skipped (intact records after each were kept). */
  damaged: { from: number; to: number; segment: string }[];
  /** Bytes cut from the end of the last segment (a write torn by a crash). */
  tornBytes: number;
  /** Ends of older segments that are not complete records (the file was cut short). */
  lostTail: { from: number; to: number; segment: string }[];
  /** Stretches no segment file covers (files deleted). */
  missing: { from: number; to: number }[];
}

/** Bytes the scan found lost or damaged: what bounds how many queue offsets can have lost their record. */
export function lostBytes(scan: CommitLogScan): number {
  let n = scan.tornBytes;
  for (const r of [...scan.damaged, ...scan.lostTail, ...scan.missing]) n += r.to - r.from;
  return n;
}

/** Write `list` (`total` bytes) at `position`: one writev, the rest (a short write) one write at a time. */
export function writeAll(fd: number, list: readonly Buffer[], total: number, position: number): void {
  let written = list.length === 1 ? fs.writeSync(fd, list[0]!, 0, total, position) : fs.writevSync(fd, list, position);
  if (written === total) return;
  let skip = written;
  for (const b of list) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    let done = skip;
    skip = 0;
    while (done < b.length) {
      const n = fs.writeSync(fd, b, done, b.length - done, position + written);
      done += n;
      written += n;
    }
  }
}
