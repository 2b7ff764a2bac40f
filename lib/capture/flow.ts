import type { RemotingCommand } from '../../protocol/command.js';
import type { SeenRequest } from './capture-options.js';
import type { FramerSink, ProblemKind, StreamFramer } from './stream-framer.js';
import { TcpStream, type TcpStreamOptions, type TcpStreamSink } from './tcp-stream.js';

/** What a Direction calls in its decoder (one object per decoder, so a direction holds no closures). */
export interface DirectionHost {
  frame(dir: Direction, cmd: RemotingCommand, frame: Buffer, offset: number): void;
  problem(dir: Direction, message: string, offset: number, lost: boolean, kind?: ProblemKind): void;
  ignored(dir: Direction, reason: string): void;
}

/**
 * One direction of a flow: its reassembly and its framer, and the sink of both. A class with its
 * methods on the prototype rather than an object of closures: a capture may hold maxFlows flows,
 * and six closures per direction were a third of a flow's cost.
 */
export class Direction implements TcpStreamSink, FramerSink {
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

export interface Flow {
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
  /** Number of its last packet: orders flows closed together across the decoders of a parallel decode. */
  lastPacket: number;
  /** Neighbours in the decoder's list of flows, least recently active first. */
  older: Flow | null;
  newer: Flow | null;
}

/** Remembers a request so its answer can be paired; past `max`, the oldest unanswered one goes. */
export function remember(
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
