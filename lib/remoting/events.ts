import type { RemotingTimeoutError } from './errors.js';

// What a RemotingClient tells its observers (RemotingClient.observe): connections opened and
// closed, and calls that timed out. The consumers and the producer turn these into their
// 'connect', 'disconnect' and 'requestTimeout' events. With no observer, a call pays one size check.

/**
 * A request that got no answer within its timeout (RemotingTimeoutError's fields).
 * @category Shared by every client
 */
export interface RequestTimeoutEvent {
  /** The address ("host:port") of the broker or name server asked. */
  brokerAddr: string;
  /** Request code (e.g. 11 PULL_MESSAGE, 310 SEND_MESSAGE_V2). */
  code: number;
  /** The request's opaque (its id on the connection). */
  opaque: number;
  /** How long the request waited, in milliseconds. */
  elapsedMs: number;
  /** The request's timeout, in milliseconds. */
  timeoutMs: number;
}

/**
 * A connection to a broker or name server opened or closed.
 * @category Shared by every client
 */
export interface ConnectionEvent {
  /** The address ("host:port") of the broker or name server. */
  brokerAddr: string;
  /** disconnect only: why it closed (undefined when it was closed on purpose). */
  error?: Error | undefined;
}

export interface RemotingObserver {
  connected?(event: ConnectionEvent): void;
  disconnected?(event: ConnectionEvent): void;
  timedOut?(event: RequestTimeoutEvent): void;
}

export function requestTimeoutEvent(err: RemotingTimeoutError): RequestTimeoutEvent {
  return {
    brokerAddr: err.addr,
    code: err.code,
    opaque: err.opaque,
    elapsedMs: err.elapsedMs,
    timeoutMs: err.timeoutMs,
  };
}

/** Calls every observer; one that throws does not stop the others nor the remoting client. */
export class RemotingObservers implements RemotingObserver {
  readonly set = new Set<RemotingObserver>();
  connected(e: ConnectionEvent): void {
    for (const o of this.set) safely(() => o.connected?.(e));
  }
  disconnected(e: ConnectionEvent): void {
    for (const o of this.set) safely(() => o.disconnected?.(e));
  }
  timedOut(e: RequestTimeoutEvent): void {
    for (const o of this.set) safely(() => o.timedOut?.(e));
  }
}

/** Runs `f`; what it throws stops neither the other listeners nor the remoting client. */
export function safely(f: () => void): void {
  try {
    f();
  } catch {
    // an application's listener is not the remoting client's concern
  }
}

/** The client events a RemotingClient's observer turns into, by their names on consumers and the producer. */
export interface RemotingClientEvents {
  connect: [event: ConnectionEvent];
  disconnect: [event: ConnectionEvent];
  requestTimeout: [event: RequestTimeoutEvent];
}

/**
 * A consumer's or the producer's connect / disconnect / requestTimeout events, relayed from the
 * client instance's remoting client: observed only while someone listens to one of them (an
 * observed client pays a little per call), so `listening()` is called again by `on()`.
 */
export class RemotingEventRelay {
  private remoting: { observe(o: RemotingObserver): () => void } | null = null;
  private unobserve: (() => void) | null = null;

  constructor(
    private readonly has: (event: keyof RemotingClientEvents) => boolean,
    private readonly emit: <E extends keyof RemotingClientEvents>(event: E, ...args: RemotingClientEvents[E]) => void,
  ) {}

  /** At start. */
  attach(remoting: { observe(o: RemotingObserver): () => void }): void {
    this.remoting = remoting;
    this.listening();
  }

  listening(): void {
    if (this.unobserve || !this.remoting) return;
    if (!this.has('connect') && !this.has('disconnect') && !this.has('requestTimeout')) return;
    this.unobserve = this.remoting.observe({
      connected: (e) => void (this.has('connect') && this.emit('connect', e)),
      disconnected: (e) => void (this.has('disconnect') && this.emit('disconnect', e)),
      timedOut: (e) => void (this.has('requestTimeout') && this.emit('requestTimeout', e)),
    });
  }

  /** At shutdown, once the last requests are done. */
  detach(): void {
    this.unobserve?.();
    this.unobserve = null;
    this.remoting = null;
  }
}
