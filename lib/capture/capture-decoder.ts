import createDebug from '../debug.js';
import { isOneway, isResponse, type RemotingCommand } from '../../protocol/command.js';
import { OptionError } from '../../protocol/errors.js';
import { DEFAULT_MAX_FRAME_LENGTH } from '../../protocol/frame.js';
import type { CaptureProblem, CapturedPacket, RecordReader } from './packet.js';
import { PCAP_MAGIC_MICRO, PCAP_MAGIC_NANO, PcapReader } from './pcap-reader.js';
import { PcapngReader } from './pcapng-reader.js';
import { StreamFramer, type FramerSink, type ProblemKind } from './stream-framer.js';
import { SegmentParser, TcpFlag, type TcpSegment } from './tcp-segment.js';
import { TcpStream, type TcpStreamOptions, type TcpStreamSink } from './tcp-stream.js';

const log = createDebug('rocketwire:capture');

/** Name server, broker, broker VIP port, and the proxy's remoting ports. */
export const ROCKETMQ_PORTS: readonly number[] = [9876, 10911, 10909, 8080, 8081];

/**
 * Input formats: pcap, pcapng, or `raw`: remoting frames back to back, with no capture around them.
 * @category Capture
 */
export type InputFormat = 'pcap' | 'pcapng' | 'raw';

/**
 * The request a response answers, as remembered when the request went by.
 * @category Capture
 */
export interface SeenRequest {
  /** The request code. */
  code: number;
  /** Capture time of the request, in seconds since the epoch (null for raw frame files). */
  ts: number | null;
  /** The request's header fields (null when it had none). */
  extFields: Record<string, string> | null;
  /** Where the request went: the broker or name server address. */
  dst: string | null;
}

/**
 * A frame found in the input. `cmd.body` is a view that is only valid during the callback.
 * @category Capture
 */
export interface DecodedFrame {
  /** The decoded remoting command (header and body). */
  cmd: RemotingCommand;
  /** Capture time of the packet that completed the frame (null for raw frame files). */
  ts: number | null;
  /** Address ("ip:port") that sent the frame (null for raw frame files). */
  src: string | null;
  /** Address ("ip:port") the frame went to (null for raw frame files). */
  dst: string | null;
  /** Packet number that completed the frame (null for raw frame files). */
  packet: number | null;
  /** Byte position of the frame in its stream (the file, for raw frame files). */
  offset: number;
  /** The frame's length in bytes, its 4-byte length prefix included. */
  frameLength: number;
  /** For a response: the request of the same opaque on the same connection, if it was seen. */
  request: SeenRequest | null;
}

/**
 * Options of a CaptureDecoder; every one has a default.
 * @category Capture
 */
export interface CaptureDecoderOptions {
  /**
   * Extra ports whose flows are RocketMQ remoting (in addition to ROCKETMQ_PORTS).
   * @default [] (only ROCKETMQ_PORTS, and flows whose first bytes parse as a frame)
   */
  ports?: number[];
  /**
   * Force the input format instead of detecting it from the magic number.
   * @default undefined (detected)
   */
  format?: InputFormat;
  /**
   * Out-of-order bytes held per direction.
   * @default 8388608 (8 MiB)
   */
  maxBufferedBytes?: number;
  /**
   * Bytes held for all flows together: out-of-order segments, partial frames, bytes a scan keeps.
   * Past it the flows that went longest without a byte drop what they hold, each reported as a lost
   * problem of kind 'buffer-limit' (their streams stay in sync where the frame length is known).
   * @default 268435456 (256 MiB)
   */
  maxTotalBufferedBytes?: number;
  /**
   * Bytes of an unknown-port stream searched for a first frame before it is ignored.
   * @default 1048576 (1 MiB)
   */
  probeBytes?: number;
  /**
   * Requests awaiting a response remembered per direction.
   * @default 65536
   */
  maxPendingRequests?: number;
  /**
   * Requests awaiting a response remembered for all flows together (each keeps its header fields
   * to pair the answer with). Past it the flow that went longest without a request forgets the
   * requests it waits answers for: their answers are decoded unpaired
   * (counters.pendingRequestsForgotten).
   * @default 262144
   */
  maxTotalPendingRequests?: number;
  /**
   * TCP flows tracked at once. Each costs some hundreds of bytes of state however little it carries,
   * so a capture of a million one-packet flows needed over 1 GB. Past the limit the flow that went
   * longest without a packet is evicted: finished early, a frame it was inside reported lost
   * ('incomplete-frame', the reason in the message), its requests awaiting answers forgotten, and
   * a problem of kind 'flow-evicted' (lost) says so; a later packet of it starts a new flow, joined
   * mid-way. Kept in least-recently-active order, so an eviction costs O(1).
   * @default 65536
   */
  maxFlows?: number;
  /**
   * Capture time (packet timestamps, never the wall clock) after which a flow without a packet is
   * finished as at the end of the capture: a frame it was inside is reported lost, with the reason;
   * 0 never. Java's client and broker close a connection idle for 120 s and heartbeat every 30 s,
   * so a flow quiet this long ended without its FIN in the capture.
   * @default 300000 (5 minutes)
   */
  flowIdleTimeoutMs?: number;
}

/**
 * A CaptureDecoderOptions value outside its range; `option` names it.
 * @category Capture
 */
export class CaptureOptionError extends OptionError {
  override readonly name = 'CaptureOptionError';
  override readonly errorCode = 'ERR_CAPTURE_OPTION';
  /** The option's lowest valid value. */
  readonly limit: number;
  constructor(option: string, value: unknown, limit: number) {
    super(option, `capture decoder option ${option} must be an integer >= ${limit}, got ${String(value)}`);
    this.limit = limit;
  }
}

/** Defaults of the decoder's bounds on flows (see CaptureDecoderOptions). */
export const DEFAULT_MAX_FLOWS = 65536;
export const DEFAULT_FLOW_IDLE_TIMEOUT_MS = 5 * 60 * 1000;
export const DEFAULT_MAX_TOTAL_BUFFERED_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_TOTAL_PENDING_REQUESTS = 262144;

function checkedInt(
  options: CaptureDecoderOptions,
  name: 'maxFlows' | 'flowIdleTimeoutMs' | 'maxTotalBufferedBytes' | 'maxPendingRequests' | 'maxTotalPendingRequests',
  dflt: number,
  min: number,
): number {
  const v = options[name];
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new CaptureOptionError(name, v, min);
  return v;
}

/**
 * What the decoder calls: `frame` for every frame found, `problem` for what it could not read or lost.
 * @category Capture
 */
export interface CaptureDecoderHandlers {
  /** Called for every frame found, in input order. */
  frame(f: DecodedFrame): void;
  /** Called for what could not be read, or was lost. */
  problem(p: CaptureProblem): void;
}

/** What a Direction calls in its decoder (one object per decoder, so a direction holds no closures). */
interface DirectionHost {
  frame(dir: Direction, cmd: RemotingCommand, frame: Buffer, offset: number): void;
  problem(dir: Direction, message: string, offset: number, lost: boolean, kind?: ProblemKind): void;
  ignored(dir: Direction, reason: string): void;
}

/**
 * One direction of a flow: its reassembly and its framer, and the sink of both. A class with its
 * methods on the prototype rather than an object of closures: a capture may hold maxFlows flows,
 * and six closures per direction were a third of a flow's cost.
 */
class Direction implements TcpStreamSink, FramerSink {
  readonly stream: TcpStream;
  framer: StreamFramer | null = null;
  /** Bytes this direction holds, as last counted. */
  buffered = 0;

  constructor(
    private readonly host: DirectionHost,
    readonly flow: Flow,
    readonly index: 0 | 1,
    readonly src: string,
    readonly dst: string,
    streamOptions: TcpStreamOptions,
  ) {
    this.stream = new TcpStream(this, streamOptions);
  }

  /** "src > dst" */
  get name(): string {
    return `${this.src} > ${this.dst}`;
  }

  data(bytes: Buffer): void {
    this.framer?.push(bytes);
  }
  gap(n: number): void {
    this.framer?.gap(n);
  }
  end(reason?: string): void {
    if (reason === undefined) this.framer?.end();
    else this.framer?.end(reason);
  }
  frame(cmd: RemotingCommand, frame: Buffer, offset: number): void {
    this.host.frame(this, cmd, frame, offset);
  }
  problem(message: string, offset: number, lost: boolean, kind?: ProblemKind): void {
    this.host.problem(this, message, offset, lost, kind);
  }
  ignored(reason: string): void {
    this.host.ignored(this, reason);
  }
}

interface Flow {
  /** The two endpoints, lower one first: the keys of the flow table. */
  lo: string;
  hi: string;
  dirs: [Direction | null, Direction | null];
  /** Requests awaiting an answer, per direction; made at the first request (most flows never need one). */
  pending: [Map<number, SeenRequest> | null, Map<number, SeenRequest> | null];
  /** On a RocketMQ port (or one given with --port). */
  known: boolean;
  /** Frames were seen on it, one way or the other. */
  confirmed: boolean;
  /** Capture time (seconds) of its last packet, on the decoder's clock (never going back). */
  lastSeen: number;
  /** Neighbours in the decoder's list of flows, least recently active first. */
  older: Flow | null;
  newer: Flow | null;
}

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
  private readonly ports: Set<number>;
  private readonly handlers: CaptureDecoderHandlers;
  private readonly options: CaptureDecoderOptions;
  private fmt: InputFormat | null;
  private reader: RecordReader | null = null;
  private rawFramer: StreamFramer | null = null;
  private readonly rawPending = new Map<number, SeenRequest>();
  private head: Buffer | null = null;
  private readonly parser: SegmentParser;
  /** Open flows by lower endpoint, then higher endpoint (no key string built per packet). */
  private readonly flows = new Map<string, Map<string, Flow>>();
  private flowCount = 0;
  /** Open flows, least recently active first (an intrusive list: O(1) to touch, expire or evict). */
  private oldest: Flow | null = null;
  private newest: Flow | null = null;
  /** The decoder's capture clock: the latest packet time seen (seconds). */
  private clock = -Infinity;
  private readonly maxFlows: number;
  private readonly idleSeconds: number;
  private readonly maxTotalPending: number;
  /** Requests remembered for all flows, and the flows remembering any, least recently asking first. */
  private totalPending = 0;
  private readonly askers = new Set<Flow>();
  private readonly streamOptions: TcpStreamOptions;
  private readonly host: DirectionHost = {
    frame: (dir, cmd, frame, offset) => this.flowFrame(dir, cmd, frame, offset),
    problem: (dir, message, offset, lost, kind) => this.frameProblem(dir, message, offset, lost, kind),
    ignored: (dir, reason) => {
      this.counters.ignoredFlows++;
      log('%s: not RocketMQ remoting (%s); ignored', dir.name, reason);
    },
  };
  private packet: CapturedPacket | null = null;
  private lastTs: number | null = null;
  private readonly maxPending: number;
  private readonly maxTotalBuffered: number;
  /** Bytes held by all directions, and the directions holding any, least recently active first. */
  private totalBuffered = 0;
  private readonly holders = new Set<Direction>();
  /** Counters, for --stats and the progress line. */
  readonly counters = {
    packets: 0,
    tcpSegments: 0,
    frames: 0,
    flows: 0,
    ignoredFlows: 0,
    bytes: 0,
    /** Frames a stream (or the input) ended inside: a flow whose first frame never completed counts here. */
    incompleteFrames: 0,
    /** Times a direction dropped what it held to keep the decoder under maxTotalBufferedBytes. */
    bufferLimitDrops: 0,
    /** Bytes so dropped. */
    bufferLimitDroppedBytes: 0,
    /** Most bytes held for all flows at once. */
    peakBufferedBytes: 0,
    /** Most flows open at once (at most maxFlows). */
    peakFlows: 0,
    /** Flows evicted because maxFlows were open (each also a 'flow-evicted' problem when it was RocketMQ). */
    flowsEvicted: 0,
    /** Flows finished after flowIdleTimeoutMs of capture time without a packet. */
    flowsIdleClosed: 0,
    /** Most requests awaiting a response remembered at once, for all flows (at most maxTotalPendingRequests). */
    peakPendingRequests: 0,
    /** Requests forgotten to stay within maxTotalPendingRequests (their answers are unpaired). */
    pendingRequestsForgotten: 0,
  };

  constructor(handlers: CaptureDecoderHandlers, options: CaptureDecoderOptions = {}) {
    this.handlers = handlers;
    this.options = options;
    this.ports = new Set([...ROCKETMQ_PORTS, ...(options.ports ?? [])]);
    this.fmt = options.format ?? null;
    this.maxPending = checkedInt(options, 'maxPendingRequests', 65536, 1);
    this.maxTotalBuffered = checkedInt(options, 'maxTotalBufferedBytes', DEFAULT_MAX_TOTAL_BUFFERED_BYTES, 0);
    this.maxFlows = checkedInt(options, 'maxFlows', DEFAULT_MAX_FLOWS, 1);
    this.maxTotalPending = checkedInt(options, 'maxTotalPendingRequests', DEFAULT_MAX_TOTAL_PENDING_REQUESTS, 1);
    const idleMs = checkedInt(options, 'flowIdleTimeoutMs', DEFAULT_FLOW_IDLE_TIMEOUT_MS, 0);
    this.idleSeconds = idleMs === 0 ? Infinity : idleMs / 1000;
    this.streamOptions = options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes };
    this.parser = new SegmentParser((p) => this.handlers.problem(p));
  }

  /** The detected (or forced) input format, once known. */
  get format(): InputFormat | null {
    return this.fmt;
  }
  /** Capture time of the last packet read (seconds; null before the first, and for raw frame files). */
  get lastPacketTs(): number | null {
    return this.lastTs;
  }
  /** Flows currently open (for tests of the memory bound). */
  get openFlows(): number {
    return this.flowCount;
  }
  /** Requests awaiting a response remembered now, for all flows. */
  get pendingRequests(): number {
    return this.totalPending;
  }
  /** Bytes held now for all flows (out-of-order segments, partial frames, scan bytes). */
  get bufferedBytes(): number {
    return this.totalBuffered;
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
      for (const inner of [...this.flows.values()]) for (const flow of [...inner.values()]) this.closeFlow(flow);
    } else if (this.rawFramer) {
      this.rawFramer.end();
    }
  }

  private open(fmt: InputFormat): void {
    const onPacket = (p: CapturedPacket): void => this.onPacket(p);
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

  private onPacket(p: CapturedPacket): void {
    this.counters.packets++;
    this.packet = p;
    this.lastTs = p.ts;
    if (p.ts > this.clock) {
      this.clock = p.ts;
      this.expireIdle();
    }
    const seg = this.parser.parse(p);
    if (seg === null) return;
    this.counters.tcpSegments++;
    if (seg.missing > 0) {
      const why =
        p.origLen > p.data.length
          ? `cut by snaplen (captured ${p.data.length} of ${p.origLen} bytes)`
          : 'shorter than its IP length';
      this.handlers.problem({
        message: `packet ${p.index}: ${seg.src} > ${seg.dst}: ${why}, ${seg.missing} payload bytes missing`,
        lost: true,
        packet: p.index,
      });
    }
    this.onSegment(seg);
  }

  private onSegment(seg: TcpSegment): void {
    const fwd = seg.src <= seg.dst;
    const lo = fwd ? seg.src : seg.dst;
    const hi = fwd ? seg.dst : seg.src;
    let flow = this.flows.get(lo)?.get(hi);
    const syn = (seg.flags & TcpFlag.SYN) !== 0;
    const rst = (seg.flags & TcpFlag.RST) !== 0;
    if (flow && syn && (seg.flags & TcpFlag.ACK) === 0) {
      // A new connection reusing the 4-tuple of one we still track.
      const d = flow.dirs[0]?.src === seg.src ? flow.dirs[0] : flow.dirs[1]?.src === seg.src ? flow.dirs[1] : null;
      if (d && d.stream.started) {
        this.closeFlow(flow);
        flow = undefined;
      }
    }
    if (!flow) {
      if (rst) return;
      while (this.flowCount >= this.maxFlows && this.oldest) this.evict(this.oldest);
      flow = {
        lo,
        hi,
        dirs: [null, null],
        pending: [null, null],
        known: this.ports.has(seg.srcPort) || this.ports.has(seg.dstPort),
        confirmed: false,
        lastSeen: this.clock,
        older: null,
        newer: null,
      };
      let inner = this.flows.get(lo);
      if (!inner) this.flows.set(lo, (inner = new Map()));
      inner.set(hi, flow);
      this.flowCount++;
      this.counters.flows++;
      if (this.flowCount > this.counters.peakFlows) this.counters.peakFlows = this.flowCount;
      this.link(flow);
    } else if (flow !== this.newest) {
      this.unlink(flow);
      this.link(flow);
    }
    flow.lastSeen = this.clock;
    let dir = flow.dirs[0]?.src === seg.src ? flow.dirs[0] : flow.dirs[1]?.src === seg.src ? flow.dirs[1] : null;
    if (!dir) dir = this.openDirection(flow, seg);
    if (rst) {
      this.closeFlow(flow);
      return;
    }
    if (syn) dir.stream.syn(seg.seq);
    if (dir.framer === null) {
      if (dir.stream.isClosed) return;
      // The framer's start depends on whether we saw the stream begin (SYN) or join it mid-way.
      dir.framer = this.openFramer(flow, dir, syn);
    }
    const payloadSeq = syn ? (seg.seq + 1) >>> 0 : seg.seq;
    const fin = (seg.flags & TcpFlag.FIN) !== 0;
    if (dir.framer.state !== 'ignored') dir.stream.segment(payloadSeq, seg.payload, seg.missing, fin);
    else if (fin)
      dir.stream.close(); // nothing to deliver: just let the flow be forgotten
    else dir.stream.skip(payloadSeq, seg.payload.length + seg.missing);
    if ((seg.flags & TcpFlag.ACK) !== 0) {
      const other = flow.dirs[1 - dir.index];
      if (other) other.stream.peerAck(seg.ack);
    }
    if (flow.dirs[0]?.stream.isClosed && flow.dirs[1]?.stream.isClosed) this.forget(flow);
    this.account(dir, true);
    this.account(flow.dirs[1 - dir.index], false);
    if (this.totalBuffered > this.maxTotalBuffered) this.enforceBound();
  }

  /** Count what a direction holds; `active`: it just received bytes (most recently active). */
  private account(d: Direction | null, active: boolean): void {
    if (d === null) return;
    const now = d.stream.bufferedBytes + (d.framer ? d.framer.bufferedBytes : 0);
    if (now !== d.buffered) {
      this.totalBuffered += now - d.buffered;
      d.buffered = now;
      if (this.totalBuffered > this.counters.peakBufferedBytes) this.counters.peakBufferedBytes = this.totalBuffered;
    }
    if (now === 0) this.holders.delete(d);
    else if (active || !this.holders.has(d)) {
      this.holders.delete(d);
      this.holders.add(d);
    }
  }

  /** Over the bound across flows: the directions idle longest drop what they hold. */
  private enforceBound(): void {
    const reason = `bytes held across flows over the limit of ${this.maxTotalBuffered} (maxTotalBufferedBytes)`;
    for (const d of this.holders) {
      if (this.totalBuffered <= this.maxTotalBuffered) break;
      const held = d.stream.dropHeld();
      const where = this.packet ? ` (packet ${this.packet.index})` : '';
      if (held > 0) {
        this.handlers.problem({
          message: `${d.name}: ${held} out-of-order bytes dropped: ${reason}${where}`,
          lost: true,
          kind: 'buffer-limit',
          flow: d.name,
          ...(this.packet ? { packet: this.packet.index } : {}),
        });
      }
      const framed = d.framer ? d.framer.drop(reason) : 0;
      this.counters.bufferLimitDrops++;
      this.counters.bufferLimitDroppedBytes += held + framed;
      this.account(d, false);
    }
  }

  private openDirection(flow: Flow, seg: TcpSegment): Direction {
    const index: 0 | 1 = flow.dirs[0] === null ? 0 : 1;
    const dir = new Direction(this.host, flow, index, seg.src, seg.dst, this.streamOptions);
    flow.dirs[index] = dir;
    return dir;
  }

  private frameProblem(dir: Direction, message: string, offset: number, lost: boolean, kind?: ProblemKind): void {
    const where = this.packet ? ` (packet ${this.packet.index})` : '';
    if (!lost) {
      log('%s: %s%s', dir.name, message, where);
      return;
    }
    if (kind === 'incomplete-frame') this.counters.incompleteFrames++;
    const name = dir.name;
    this.handlers.problem({
      message: `${name}: ${message}${where}`,
      lost,
      offset,
      flow: name,
      ...(this.packet ? { packet: this.packet.index } : {}),
      ...(kind ? { kind } : {}),
    });
  }

  private openFramer(flow: Flow, dir: Direction, sawStart: boolean): StreamFramer {
    const sink: FramerSink = dir;
    const probe = this.options.probeBytes ?? 1024 * 1024;
    if (flow.confirmed) {
      // The other direction already carried frames.
      return new StreamFramer(sink, sawStart ? { start: 'sync' } : { start: 'scan', scanLimit: Infinity });
    }
    if (flow.known) {
      // A RocketMQ port: from the first byte when we saw the connection open (quietly giving up
      // if that is no frame: 8080 is HTTP's port too), else search as far as two of the largest frames.
      if (sawStart) return new StreamFramer(sink, { start: 'sync', confirmed: false, scanLimit: probe });
      return new StreamFramer(sink, { start: 'scan', scanLimit: 2 * DEFAULT_MAX_FRAME_LENGTH });
    }
    // Any other port: RocketMQ only if valid frames show up, from the first byte when we saw the
    // connection open, or within the first probeBytes when the capture joined it mid-way.
    return new StreamFramer(sink, { start: 'scan', scanLimit: sawStart ? 1 : probe });
  }

  private flowFrame(dir: Direction, cmd: RemotingCommand, frame: Buffer, offset: number): void {
    this.counters.frames++;
    if (!dir.flow.confirmed) {
      // Frames one way make the connection RocketMQ both ways.
      dir.flow.confirmed = true;
      dir.flow.dirs[1 - dir.index]?.framer?.promote();
    }
    const ts = this.packet ? this.packet.ts : this.lastTs;
    let request: SeenRequest | null = null;
    if (isResponse(cmd)) {
      const pending = dir.flow.pending[1 - dir.index];
      request = pending?.get(cmd.opaque) ?? null;
      if (request) {
        pending!.delete(cmd.opaque);
        this.totalPending--;
      }
    } else if (!isOneway(cmd)) {
      const flow = dir.flow;
      const pending = (flow.pending[dir.index] ??= new Map());
      const before = pending.size;
      remember(pending, cmd, ts, dir.dst, Math.min(this.maxPending, this.maxTotalPending));
      this.totalPending += pending.size - before;
      this.askers.delete(flow);
      this.askers.add(flow);
      // Over the bound across flows: the flows that asked longest ago forget (never the one asking now).
      for (const f of this.askers) {
        if (this.totalPending <= this.maxTotalPending || f === flow) break;
        this.forgetPending(f);
      }
      if (this.totalPending > this.counters.peakPendingRequests) this.counters.peakPendingRequests = this.totalPending;
    }
    this.handlers.frame({
      cmd,
      ts,
      src: dir.src,
      dst: dir.dst,
      packet: this.packet ? this.packet.index : null,
      offset,
      frameLength: frame.length,
      request,
    });
  }

  /** Drop the requests a flow waits answers for (the bound across flows, or the flow is gone). */
  private forgetPending(flow: Flow, closing = false): void {
    for (const m of flow.pending) {
      if (m === null) continue;
      this.totalPending -= m.size;
      if (!closing) this.counters.pendingRequestsForgotten += m.size;
      m.clear();
    }
    this.askers.delete(flow);
  }

  private forget(flow: Flow): void {
    const inner = this.flows.get(flow.lo);
    if (inner?.get(flow.hi) !== flow) return;
    this.forgetPending(flow, true);
    inner.delete(flow.hi);
    if (inner.size === 0) this.flows.delete(flow.lo);
    this.flowCount--;
    this.unlink(flow);
  }

  /** `reason`: why a flow that did not end is finished early (idle, evicted), for its problems. */
  private closeFlow(flow: Flow, reason?: string): void {
    this.forget(flow);
    for (const d of flow.dirs) {
      if (reason === undefined) d?.stream.close();
      else d?.stream.close(reason);
      this.account(d, false);
    }
  }

  /** Make `flow` the most recently active. */
  private link(flow: Flow): void {
    flow.older = this.newest;
    flow.newer = null;
    if (this.newest) this.newest.newer = flow;
    else this.oldest = flow;
    this.newest = flow;
  }

  private unlink(flow: Flow): void {
    if (flow.older) flow.older.newer = flow.newer;
    else if (this.oldest === flow) this.oldest = flow.newer;
    else return; // not in the list
    if (flow.newer) flow.newer.older = flow.older;
    else this.newest = flow.older;
    flow.older = flow.newer = null;
  }

  /** Finish the flows without a packet for flowIdleTimeoutMs of capture time (the oldest come first). */
  private expireIdle(): void {
    const before = this.clock - this.idleSeconds;
    let flow = this.oldest;
    if (flow === null || flow.lastSeen >= before) return;
    const reason = `flow idle for over ${this.idleSeconds} s of capture time (flowIdleTimeoutMs)`;
    while (flow !== null && flow.lastSeen < before) {
      this.counters.flowsIdleClosed++;
      this.closeFlow(flow, reason);
      flow = this.oldest;
    }
  }

  /** maxFlows are open: finish the least recently active flow early, and say so. */
  private evict(flow: Flow): void {
    this.counters.flowsEvicted++;
    const reason = `flow evicted: ${this.maxFlows} flows open (maxFlows)`;
    if (flow.known || flow.confirmed) {
      const name = flow.dirs[0]?.name ?? `${flow.lo} > ${flow.hi}`;
      const where = this.packet ? ` (packet ${this.packet.index})` : '';
      this.handlers.problem({
        message: `${name}: ${reason}, the least recently active; what it held is dropped and a later packet starts a new flow${where}`,
        lost: true,
        kind: 'flow-evicted',
        flow: name,
        ...(this.packet ? { packet: this.packet.index, ts: this.packet.ts } : {}),
      });
    }
    this.closeFlow(flow, reason);
  }
}

function remember(
  pending: Map<number, SeenRequest>,
  cmd: RemotingCommand,
  ts: number | null,
  dst: string | null,
  max: number,
): void {
  if (pending.size >= max) {
    // Requests never answered (the capture missed the response): forget the oldest.
    const oldest = pending.keys().next().value as number;
    pending.delete(oldest);
  }
  pending.set(cmd.opaque, { code: cmd.code, ts, extFields: cmd.extFields, dst });
}

/** pcap and pcapng by magic number; anything else is taken as concatenated frames. */
export function detectFormat(head: Buffer): InputFormat {
  if (head.length < 4) return 'raw';
  const be = head.readUInt32BE(0);
  const le = head.readUInt32LE(0);
  if (be === PCAP_MAGIC_MICRO || be === PCAP_MAGIC_NANO || le === PCAP_MAGIC_MICRO || le === PCAP_MAGIC_NANO)
    return 'pcap';
  if (be === 0x0a0d0d0a) return 'pcapng';
  return 'raw';
}
