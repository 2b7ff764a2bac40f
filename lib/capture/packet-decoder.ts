import createDebug from '../debug.js';
import { isOneway, isResponse, type RemotingCommand } from '../../protocol/command.js';
import { DEFAULT_MAX_FRAME_LENGTH } from '../../protocol/frame.js';
import {
  checkedInt,
  DEFAULT_FLOW_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_FLOWS,
  DEFAULT_MAX_TOTAL_BUFFERED_BYTES,
  DEFAULT_MAX_TOTAL_PENDING_REQUESTS,
  ROCKETMQ_PORTS,
  type CaptureCounters,
  type CaptureDecoderHandlers,
  type CaptureDecoderOptions,
  type SeenRequest,
} from './capture-options.js';
import { Direction, remember, type DirectionHost, type Flow } from './flow.js';
import type { CapturedPacket } from './packet.js';
import { StreamFramer, type FramerSink, type ProblemKind } from './stream-framer.js';
import { SegmentParser, TcpFlag, type TcpSegment } from './tcp-segment.js';
import type { TcpStreamOptions } from './tcp-stream.js';

const log = createDebug('rocketwire:capture');

/** What a parallel decode needs to know from inside a decoder (lib/capture/parallel/). */
export interface PacketDecoderHooks {
  /**
   * A flow is about to be finished for its idleness or at the end of the input: what it delivers
   * next belongs to it. `lastPacket` is the number of its last packet, which orders flows closed at
   * the same moment (the least recently active first) across decoders that own different flows.
   */
  flowClosing?(lastPacket: number): void;
}

/** A packet of the capture that another decoder owns: only its number and time are known here. */
interface PassedPacket extends CapturedPacket {
  index: number;
  ts: number;
}

/**
 * The packet side of a CaptureDecoder: link/IP/TCP → per-flow reassembly → frames → request/response
 * pairing, with the bounds on what flows may hold. It is fed captured packets one by one; the
 * CaptureDecoder reads them from the file. A parallel decode (lib/capture/parallel/) runs one per
 * worker, each owning some flows, and tells each about the packets it does not own (`pass`) so that
 * its capture clock, and so its idle timeouts, move as one decoder's would.
 */
export class PacketDecoder {
  private readonly ports: Set<number>;
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
  private readonly passed: PassedPacket = {
    index: 0,
    ts: 0,
    linkType: -1,
    data: Buffer.alloc(0),
    origLen: 0,
    fileOffset: -1,
  };
  private lastTs: number | null = null;
  private readonly maxPending: number;
  private readonly maxTotalBuffered: number;
  /** Bytes held by all directions, and the directions holding any, least recently active first. */
  private totalBuffered = 0;
  private readonly holders = new Set<Direction>();

  constructor(
    private readonly handlers: CaptureDecoderHandlers,
    private readonly options: CaptureDecoderOptions,
    readonly counters: CaptureCounters,
    private readonly hooks: PacketDecoderHooks = {},
  ) {
    this.ports = new Set([...ROCKETMQ_PORTS, ...(options.ports ?? [])]);
    this.maxPending = checkedInt(options, 'maxPendingRequests', 65536, 1);
    this.maxTotalBuffered = checkedInt(options, 'maxTotalBufferedBytes', DEFAULT_MAX_TOTAL_BUFFERED_BYTES, 0);
    this.maxFlows = checkedInt(options, 'maxFlows', DEFAULT_MAX_FLOWS, 1);
    this.maxTotalPending = checkedInt(options, 'maxTotalPendingRequests', DEFAULT_MAX_TOTAL_PENDING_REQUESTS, 1);
    const idleMs = checkedInt(options, 'flowIdleTimeoutMs', DEFAULT_FLOW_IDLE_TIMEOUT_MS, 0);
    this.idleSeconds = idleMs === 0 ? Infinity : idleMs / 1000;
    this.streamOptions = options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes };
    this.parser = new SegmentParser((p) => this.handlers.problem(p));
  }

  /** Capture time of the last packet read (seconds; null before the first). */
  get lastPacketTs(): number | null {
    return this.lastTs;
  }
  get openFlows(): number {
    return this.flowCount;
  }
  get pendingRequests(): number {
    return this.totalPending;
  }
  get bufferedBytes(): number {
    return this.totalBuffered;
  }

  /**
   * A packet another decoder owns: its time moves the capture clock (finishing idle flows) and it is
   * the packet what happens now is reported in, exactly as when one decoder reads every packet.
   */
  pass(index: number, ts: number): void {
    const p = this.passed;
    p.index = index;
    p.ts = ts;
    this.packet = p;
    this.lastTs = ts;
    if (ts > this.clock) {
      this.clock = ts;
      this.expireIdle();
    }
  }

  /** The end of the input: every flow still open is finished, the least recently active first. */
  endFlows(): void {
    while (this.oldest !== null) {
      const flow = this.oldest;
      this.hooks.flowClosing?.(flow.lastPacket);
      this.closeFlow(flow);
      this.unlink(flow); // never twice, whatever closing did
    }
  }

  /** One captured packet, in capture order. */
  onPacket(p: CapturedPacket): void {
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
      if (d?.stream.started) {
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
        lastPacket: 0,
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
    flow.lastPacket = this.packet ? this.packet.index : 0;
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
      this.hooks.flowClosing?.(flow.lastPacket);
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
