import createDebug from '../debug.js';
import {
  RemotingFlag,
  ResponseCode,
  createResponse,
  encodeCommandParts,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/internal.js';
import type { BufferBudget } from './buffer-budget.js';
import { OVERLOAD_REMARK } from './connection-options.js';
import type { OutboundQueue } from './outbound-queue.js';

const log = createDebug('rocketwire:remoting');

/** A processor or gate of connections of type C (RequestProcessor and RequestGate for RemotingConnection). */
type Processor<C> = (request: RemotingCommand, conn: C) => Promise<RemotingCommand | null> | RemotingCommand | null;
type Gate<C> = (request: RemotingCommand, conn: C) => RemotingCommand | null;

/**
 * What the serving side needs of its connection, handed over once when the connection is built.
 * Generic over the connection's type, so that this file needs nothing from connection.ts.
 */
export interface DispatchHost<C extends { readonly closed: boolean }> {
  /** Given to the gate and the processors. */
  readonly conn: C;
  readonly remoteAddress: string;
  readonly budget: BufferBudget | undefined;
  readonly out: OutboundQueue;
  readonly requestGate: Gate<C> | undefined;
  /** The connection's own processors (looked up first), then the server's or client's shared ones. */
  readonly ownProcessors: ReadonlyMap<number, Processor<C>>;
  readonly sharedProcessors: ReadonlyMap<number, Processor<C>> | undefined;
  readonly responseSerializeType: SerializeTypeName | undefined;
  /** Writes one encoded frame (or queues it while the socket drains); throws as OutboundQueue.write does. */
  readonly write: (cmd: RemotingCommand, head: Buffer, body: Buffer | null) => void;
  /** The first request is held: stop reading until `runHeld()` has run them all. */
  readonly holdReading: () => void;
}

interface HeldRequest {
  request: RemotingCommand;
  /** The frame's bytes. */
  size: number;
}

/**
 * The serving side of a connection: a request the peer made goes through the budget's refusal and
 * the gate to its processor, and the processor's answer (or its failure, or SYSTEM_BUSY when the
 * answer does not fit the server's budget) goes back with the request's opaque. On a server's end,
 * while the connection holds its output bound (a peer slow to read its answers, or one that never
 * does), requests that need an answer are held in arrival order and reading stops (`holdReading`);
 * `runHeld` runs them once the output has drained. Oneway requests produce no output and run at once.
 */
export class RequestDispatch<C extends { readonly closed: boolean }> {
  /** Requests answered SYSTEM_BUSY because the response did not fit (server side). */
  busyAnswers = 0;
  private readonly conn: C;
  private readonly remoteAddress: string;
  private readonly budget: BufferBudget | undefined;
  private readonly out: OutboundQueue;
  private readonly requestGate: Gate<C> | undefined;
  private readonly ownProcessors: ReadonlyMap<number, Processor<C>>;
  private readonly sharedProcessors: ReadonlyMap<number, Processor<C>> | undefined;
  private readonly responseSerializeType: SerializeTypeName | undefined;
  private readonly write: (cmd: RemotingCommand, head: Buffer, body: Buffer | null) => void;
  private readonly holdReading: () => void;
  /** Requests waiting for the output to drain, oldest at `heldHead`. */
  private held: HeldRequest[] = [];
  private heldHead = 0;

  constructor(host: DispatchHost<C>) {
    this.conn = host.conn;
    this.remoteAddress = host.remoteAddress;
    this.budget = host.budget;
    this.out = host.out;
    this.requestGate = host.requestGate;
    this.ownProcessors = host.ownProcessors;
    this.sharedProcessors = host.sharedProcessors;
    this.responseSerializeType = host.responseSerializeType;
    this.write = host.write;
    this.holdReading = host.holdReading;
  }

  /** Requests held now. */
  get heldRequests(): number {
    return this.held.length - this.heldHead;
  }

  /** A request the peer sent, in a frame of `size` bytes. */
  dispatch(request: RemotingCommand, size: number): void {
    const budget = this.budget;
    if (budget && (request.flag & RemotingFlag.ONEWAY) === 0) {
      // A peer that has not read its answers: hold the request (and, in the host, stop reading)
      // until they drain, behind the ones held before it.
      if (this.heldHead < this.held.length || budget.holdsRequests(this.out.bufferedBytes)) {
        if (budget.outputFull) {
          this.answerBusy(request, this.out.bufferedBytes);
          return;
        }
        if (this.heldHead === this.held.length) {
          budget.outputPaused();
          log(
            '%s has not read %d bytes of answers: its requests wait, reading paused',
            this.remoteAddress,
            this.out.bufferedBytes,
          );
          this.holdReading();
        }
        this.held.push({ request, size });
        budget.changeHeld(1, size);
        return;
      }
    }
    this.run(request);
  }

  /**
   * Run the held requests, oldest first, while the connection holds less than its output bound.
   * True when none is left (reading may resume).
   */
  runHeld(): boolean {
    const budget = this.budget!;
    while (this.heldHead < this.held.length) {
      if (this.conn.closed) {
        this.dropHeld();
        return true;
      }
      if (budget.holdsRequests(this.out.bufferedBytes)) return false;
      const h = this.held[this.heldHead]!;
      this.held[this.heldHead++] = undefined as unknown as HeldRequest;
      budget.changeHeld(-1, -h.size);
      // runHeld runs from a socket's write callback: a throw (a gate's bug) must not escape there
      try {
        this.run(h.request);
      } catch (err) {
        this.answerError(h.request, err);
      }
    }
    this.held = [];
    this.heldHead = 0;
    return true;
  }

  /** The connection closed: its held requests are dropped, unanswered. */
  dropHeld(): void {
    if (this.heldHead === this.held.length) return;
    let bytes = 0;
    for (let i = this.heldHead; i < this.held.length; i++) bytes += this.held[i]!.size;
    this.budget?.changeHeld(-(this.held.length - this.heldHead), -bytes);
    this.held = [];
    this.heldHead = 0;
  }

  private run(request: RemotingCommand): void {
    // A server out of room: refuse before doing the work, as Java's rejectRequest does (oneway
    // requests, which produce no output, still run).
    if (this.budget && (request.flag & RemotingFlag.ONEWAY) === 0 && this.budget.outputFull) {
      this.answerBusy(request, this.out.bufferedBytes);
      return;
    }
    if (this.requestGate) {
      const refusal = this.requestGate(request, this.conn);
      if (refusal !== null) {
        this.answer(request, refusal);
        return;
      }
    }
    const processor = this.ownProcessors.get(request.code) ?? this.sharedProcessors?.get(request.code);
    if (processor === undefined) {
      log('no processor for request code %d from %s', request.code, this.remoteAddress);
      this.answer(
        request,
        createResponse(request, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, {
          remark: ` request type ${request.code} not supported`,
        }),
      );
      return;
    }
    let result: Promise<RemotingCommand | null> | RemotingCommand | null;
    try {
      result = processor(request, this.conn);
    } catch (err) {
      this.answerError(request, err);
      return;
    }
    if (result !== null && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<RemotingCommand | null>).then(
        (r) => this.answer(request, r),
        (err) => this.answerError(request, err),
      );
    } else {
      this.answer(request, result as RemotingCommand | null);
    }
  }

  private answerError(request: RemotingCommand, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    log('processor for code %d from %s failed: %s', request.code, this.remoteAddress, message);
    this.answer(request, createResponse(request, ResponseCode.SYSTEM_ERROR, { remark: message }));
  }

  private answer(request: RemotingCommand, response: RemotingCommand | null): void {
    if ((request.flag & RemotingFlag.ONEWAY) !== 0 || response === null || response === undefined || this.conn.closed)
      return;
    response.opaque = request.opaque;
    response.flag = (response.flag | RemotingFlag.RESPONSE) & ~RemotingFlag.ONEWAY;
    response.serializeType = this.responseSerializeType ?? request.serializeType;
    try {
      const [head, body] = encodeCommandParts(response);
      if (this.budget) {
        const held = this.out.bufferedBytes;
        if (!this.budget.admitsAnswer(held, head.length + (body ? body.length : 0))) {
          this.answerBusy(request, held);
          return;
        }
      }
      this.write(response, head, body);
    } catch (err) {
      log('cannot answer %d to %s: %s', request.opaque, this.remoteAddress, (err as Error).message);
    }
  }

  /** SYSTEM_BUSY in place of a response that does not fit (nothing for a oneway request). */
  private answerBusy(request: RemotingCommand, held: number): void {
    if ((request.flag & RemotingFlag.ONEWAY) !== 0 || this.conn.closed) return;
    this.busyAnswers++;
    this.budget!.busyAnswers++;
    log(
      'answering SYSTEM_BUSY to code %d from %s: %d bytes buffered for it, %d for all connections',
      request.code,
      this.remoteAddress,
      held,
      this.budget!.bufferedBytes,
    );
    const busy = createResponse(request, ResponseCode.SYSTEM_BUSY, { remark: OVERLOAD_REMARK });
    busy.opaque = request.opaque;
    busy.flag = (busy.flag | RemotingFlag.RESPONSE) & ~RemotingFlag.ONEWAY;
    busy.serializeType = this.responseSerializeType ?? request.serializeType;
    try {
      const [head, body] = encodeCommandParts(busy);
      this.write(busy, head, body);
    } catch (err) {
      log('cannot answer %d to %s: %s', request.opaque, this.remoteAddress, (err as Error).message);
    }
  }
}
