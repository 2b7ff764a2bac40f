import { isOneway, isResponse, type RemotingCommand } from '../../protocol/command.js';
import {
  checkedInt,
  detectFormat,
  newCaptureCounters,
  type CaptureCounters,
  type CaptureDecoderHandlers,
  type CaptureDecoderOptions,
  type InputFormat,
  type SeenRequest,
} from './capture-options.js';
import { remember } from './flow.js';
import type { CaptureProblem, CapturedPacket, RecordReader } from './packet.js';
import { PacketDecoder } from './packet-decoder.js';
import { PcapReader } from './pcap-reader.js';
import { PcapngReader } from './pcapng-reader.js';
import { StreamFramer } from './stream-framer.js';

/**
 * Decodes RocketMQ remoting frames from a pcap or pcapng capture, or from a file of concatenated
 * frames, fed as a stream of chunks: records → link/IP/TCP → per-flow reassembly → frames →
 * request/response pairing. Memory follows the bytes seen, not the input size nor the lengths frame
 * heads announce: flows are forgotten on FIN/RST, a partial frame's buffer grows as its bytes
 * arrive, and what all flows hold together is bounded (maxTotalBufferedBytes): past it, the flows
 * idle longest drop what they hold and say so. The flows themselves are bounded too: a flow idle for
 * flowIdleTimeoutMs of capture time is finished, and past maxFlows the least recently active one is
 * evicted, so a hostile capture of a million flows costs what maxFlows of them cost.
 * @category Capture
 */
export class CaptureDecoder {
  private readonly handlers: CaptureDecoderHandlers;
  private fmt: InputFormat | null;
  private reader: RecordReader | null = null;
  private rawFramer: StreamFramer | null = null;
  private readonly rawPending = new Map<number, SeenRequest>();
  private head: Buffer | null = null;
  private readonly maxPending: number;
  /** The packets' side: flows, reassembly, frames, the bounds. */
  private readonly packets: PacketDecoder;
  /** Counters, for --stats and the progress line. */
  readonly counters: CaptureCounters = newCaptureCounters();

  constructor(handlers: CaptureDecoderHandlers, options: CaptureDecoderOptions = {}) {
    this.handlers = handlers;
    this.fmt = options.format ?? null;
    this.maxPending = checkedInt(options, 'maxPendingRequests', 65536, 1);
    this.packets = new PacketDecoder(handlers, options, this.counters);
  }

  /** The detected (or forced) input format, once known. */
  get format(): InputFormat | null {
    return this.fmt;
  }
  /** Capture time of the last packet read (seconds; null before the first, and for raw frame files). */
  get lastPacketTs(): number | null {
    return this.packets.lastPacketTs;
  }
  /** Flows currently open (for tests of the memory bound). */
  get openFlows(): number {
    return this.packets.openFlows;
  }
  /** Requests awaiting a response remembered now, for all flows. */
  get pendingRequests(): number {
    return this.packets.pendingRequests;
  }
  /** Bytes held now for all flows (out-of-order segments, partial frames, scan bytes). */
  get bufferedBytes(): number {
    return this.packets.bufferedBytes;
  }
  /** True when the input could not be read to its end (damaged or truncated file). */
  get failed(): boolean {
    return (this.reader?.failed ?? false) || this.rawFramer?.state === 'failed';
  }

  /** Feeds the next bytes of the input (any chunking): frames found are handed to the handlers as they complete. */
  push(chunk: Buffer): void {
    this.counters.bytes += chunk.length;
    if (this.fmt === null || (this.reader === null && this.rawFramer === null)) {
      // Detect the format from the first 4 bytes.
      const buf: Buffer = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      if (this.fmt === null && buf.length < 4) {
        this.head = Buffer.from(buf);
        return;
      }
      this.head = null;
      this.fmt ??= detectFormat(buf);
      this.open(this.fmt);
      chunk = buf;
    }
    if (this.reader) this.reader.push(chunk);
    else this.rawFramer!.push(chunk);
  }

  /** Ends the input: reports what was cut short (a partial record or frame) as problems. */
  end(): void {
    if (this.head) {
      // Fewer than 4 bytes in all: treat as raw frames, which reports the cut frame.
      const h = this.head;
      this.head = null;
      this.fmt ??= 'raw';
      this.open(this.fmt);
      if (this.reader) this.reader.push(h);
      else this.rawFramer!.push(h);
    }
    if (this.reader) {
      this.reader.end();
      this.packets.endFlows();
    } else if (this.rawFramer) {
      this.rawFramer.end();
    }
  }

  private open(fmt: InputFormat): void {
    const onPacket = (p: CapturedPacket): void => this.packets.onPacket(p);
    const onProblem = (p: CaptureProblem): void => this.handlers.problem(p);
    if (fmt === 'pcap') this.reader = new PcapReader(onPacket, onProblem);
    else if (fmt === 'pcapng') this.reader = new PcapngReader(onPacket, onProblem);
    else {
      this.rawFramer = new StreamFramer(
        {
          frame: (cmd, frame, offset) => this.rawFrame(cmd, frame, offset),
          problem: (message, offset, lost, kind) => {
            if (kind === 'incomplete-frame') this.counters.incompleteFrames++;
            this.handlers.problem({ message, offset, lost, ...(kind ? { kind } : {}) });
          },
        },
        { start: 'sync', resync: false, streamName: 'input' },
      );
    }
  }

  private rawFrame(cmd: RemotingCommand, frame: Buffer, offset: number): void {
    this.counters.frames++;
    let request: SeenRequest | null = null;
    if (isResponse(cmd)) {
      request = this.rawPending.get(cmd.opaque) ?? null;
      if (request) this.rawPending.delete(cmd.opaque);
    } else if (!isOneway(cmd)) {
      remember(this.rawPending, cmd, null, null, this.maxPending);
    }
    this.handlers.frame({
      cmd,
      ts: null,
      src: null,
      dst: null,
      packet: null,
      offset,
      frameLength: frame.length,
      request,
    });
  }
}
