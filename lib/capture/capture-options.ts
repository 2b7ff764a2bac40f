import type { RemotingCommand } from '../../protocol/command.js';
import { CaptureOptionError } from './errors.js';
import type { CaptureProblem } from './packet.js';
import { PCAP_MAGIC_MICRO, PCAP_MAGIC_NANO } from './pcap-reader.js';

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
 * What the decoder calls: `frame` for every frame found, `problem` for what it could not read or lost.
 * @category Capture
 */
export interface CaptureDecoderHandlers {
  /** Called for every frame found, in input order. */
  frame(f: DecodedFrame): void;
  /** Called for what could not be read, or was lost. */
  problem(p: CaptureProblem): void;
}

/** Defaults of the decoder's bounds on flows (see CaptureDecoderOptions). */
export const DEFAULT_MAX_FLOWS = 65536;
export const DEFAULT_FLOW_IDLE_TIMEOUT_MS = 5 * 60 * 1000;
export const DEFAULT_MAX_TOTAL_BUFFERED_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_TOTAL_PENDING_REQUESTS = 262144;

export function checkedInt(
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
 * What a CaptureDecoder counted (its `counters`), for --stats and the progress line.
 * @category Capture
 */
export interface CaptureCounters {
  /** Capture records read (packets of a pcap or pcapng file). */
  packets: number;
  /** TCP segments among them. */
  tcpSegments: number;
  /** Remoting frames decoded. */
  frames: number;
  /** TCP flows opened. */
  flows: number;
  /** Flows that turned out not to carry RocketMQ remoting, and were ignored. */
  ignoredFlows: number;
  /** Input bytes read. */
  bytes: number;
  /** Frames a stream (or the input) ended inside: a flow whose first frame never completed counts here. */
  incompleteFrames: number;
  /** Times a direction dropped what it held to keep the decoder under maxTotalBufferedBytes. */
  bufferLimitDrops: number;
  /** Bytes so dropped. */
  bufferLimitDroppedBytes: number;
  /** Most bytes held for all flows at once. */
  peakBufferedBytes: number;
  /** Most flows open at once (at most maxFlows). */
  peakFlows: number;
  /** Flows evicted because maxFlows were open (each also a 'flow-evicted' problem when it was RocketMQ). */
  flowsEvicted: number;
  /** Flows finished after flowIdleTimeoutMs of capture time without a packet. */
  flowsIdleClosed: number;
  /** Most requests awaiting a response remembered at once, for all flows (at most maxTotalPendingRequests). */
  peakPendingRequests: number;
  /** Requests forgotten to stay within maxTotalPendingRequests (their answers are unpaired). */
  pendingRequestsForgotten: number;
}

export function newCaptureCounters(): CaptureCounters {
  return {
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
