import { ByteQueue } from './byte-queue.js';
import type { PacketHandler, ProblemHandler, RecordReader } from './packet.js';

/**
 * What the pcap and pcapng readers share: the queue of received bytes, the packet count and the
 * failure latch. A fatal problem (bad magic, implausible length) stops the reader for good,
 * because nothing after a damaged length can be framed again.
 */
export abstract class CaptureFileReader implements RecordReader {
  protected readonly q = new ByteQueue();
  /** Byte order of the current file (pcap) or section (pcapng). */
  protected le = true;
  /** Packets read so far: the 1-based number of the last one. */
  protected index = 0;
  private fail = false;

  constructor(
    protected readonly onPacket: PacketHandler,
    protected readonly onProblem: ProblemHandler,
  ) {}

  get failed(): boolean {
    return this.fail;
  }
  get packets(): number {
    return this.index;
  }

  push(chunk: Buffer): void {
    if (this.fail) return;
    this.q.push(chunk);
    this.readRecords();
  }

  abstract end(): void;

  /** Read every whole record in `q`; leave a partial one for the next push. */
  protected abstract readRecords(): void;

  protected fatal(message: string, offset: number): void {
    this.fail = true;
    this.onProblem({ message, lost: true, offset, packet: this.index + 1 });
  }
}

/**
 * Round seconds to microseconds: the resolution we print. Here rather than in packet.ts, which then
 * holds types only and is never loaded by a decode.
 */
export function roundMicros(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}
