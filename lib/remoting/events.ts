import type { RemotingTimeoutError } from './errors.js';

// What a RemotingClient tells its observers (RemotingClient.observe): connections opened and
// closed, and calls that timed out. The consumers and the producer turn these into their
// 'connect', 'disconnect' and 'requestTimeout' events. With no observer, a call pays one size check.

/** A request that got no answer within its timeout (RemotingTimeoutError's fields). */
export interface RequestTimeoutEvent {
  brokerAddr: string;
  /** Request code (e.g. 11 PULL_MESSAGE, 310 SEND_MESSAGE_V2). */
  code: number;
  opaque: number;
  elapsedMs: number;
  timeoutMs: number;
}

/** A connection to a broker or name server opened or closed. */
export interface ConnectionEvent {
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
  return { brokerAddr: err.addr, code: err.code, opaque: err.opaque, elapsedMs: err.elapsedMs, timeoutMs: err.timeoutMs };
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

function safely(f: () => void): void {
  try {
    f();
  } catch {
    // an application's listener is not the remoting client's concern
  }
}
