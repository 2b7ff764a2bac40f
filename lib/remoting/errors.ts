import {
  ProtocolError,
  RocketwireError,
  ResponseCode,
  requestCodeName,
  responseCodeName,
  type RemotingCommand,
} from '../../protocol/index.js';

/**
 * Errors of the remoting layer. Every one names the peer address (`addr`, "host:port") in its
 * message and as a field, so a log line says which broker or name server misbehaved.
 * @category Errors
 */
export class RemotingError extends RocketwireError {
  override readonly name: string = 'RemotingError';
  override readonly errorCode: string = 'ERR_REMOTING';
  /** A remoting failure is a lost or slow peer, worth another try, unless the subclass says otherwise (abort, closed client). */
  override readonly retriable: boolean = true;
  readonly addr: string;
  constructor(addr: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.addr = addr;
  }
}

function describeCall(code: number, opaque: number): string {
  return `${requestCodeName(code)} (code ${code}, opaque ${opaque})`;
}

/**
 * No response arrived within the call's timeout. The connection stays open.
 * @category Errors
 */
export class RemotingTimeoutError extends RemotingError {
  override readonly name = 'RemotingTimeoutError';
  override readonly errorCode = 'ERR_REMOTING_TIMEOUT';
  override readonly retriable: boolean = true;
  readonly opaque: number;
  readonly code: number;
  readonly elapsedMs: number;
  readonly timeoutMs: number;
  constructor(addr: string, opaque: number, code: number, elapsedMs: number, timeoutMs: number) {
    super(
      addr,
      `${describeCall(code, opaque)} to ${addr} timed out after ${Math.round(elapsedMs)} ms (timeout ${timeoutMs} ms)`,
    );
    this.opaque = opaque;
    this.code = code;
    this.elapsedMs = elapsedMs;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The TCP (or TLS) connection to `addr` could not be opened, or the address is in reconnect back-off.
 * @category Errors
 */
export class RemotingConnectError extends RemotingError {
  override readonly name = 'RemotingConnectError';
  override readonly errorCode = 'ERR_REMOTING_CONNECT';
  override readonly retriable: boolean = true;
  /** When the address is in back-off after failed attempts: ms until the next attempt is allowed. */
  readonly retryInMs: number;
  constructor(addr: string, message: string, options?: { cause?: unknown; retryInMs?: number }) {
    super(addr, `cannot connect to ${addr}: ${message}`, options);
    this.retryInMs = options?.retryInMs ?? 0;
  }
}

/**
 * The RemotingClient itself was closed: no call can start on it. A RemotingError (it names the
 * address), but not retriable: callers that retry remoting failures on another broker (the
 * producer) test `retriable` and stop at once.
 * @category Errors
 */
export class RemotingClientClosedError extends RemotingError {
  override readonly name = 'RemotingClientClosedError';
  override readonly errorCode = 'ERR_REMOTING_CLIENT_CLOSED';
  override readonly retriable: boolean = false;
  constructor(addr: string) {
    super(addr, `RemotingClient is closed (call to ${addr})`);
  }
}

/**
 * The connection closed while the call was in flight (peer closed it, the socket failed, a corrupt
 * frame arrived, or close() was called). `cause` holds the reason when there is one (a ProtocolError
 * for a corrupt frame).
 * @category Errors
 */
export class RemotingClosedError extends RemotingError {
  override readonly name = 'RemotingClosedError';
  override readonly errorCode = 'ERR_REMOTING_CONNECTION_CLOSED';
  override readonly retriable: boolean = true;
  readonly opaque: number;
  readonly code: number;
  readonly elapsedMs: number;
  constructor(addr: string, opaque: number, code: number, elapsedMs: number, options?: { cause?: unknown }) {
    const c = options?.cause;
    const why =
      c instanceof ProtocolError ? `: corrupt frame: ${c.message}` : c instanceof Error ? `: ${c.message}` : '';
    super(
      addr,
      `connection to ${addr} closed while ${describeCall(code, opaque)} was in flight for ${Math.round(elapsedMs)} ms${why}`,
      options,
    );
    this.opaque = opaque;
    this.code = code;
    this.elapsedMs = elapsedMs;
  }
}

/**
 * The call was cancelled by its AbortSignal before a response arrived; `cause` is the signal's reason.
 * @category Errors
 */
export class RemotingAbortError extends RemotingError {
  override readonly name = 'RemotingAbortError';
  override readonly errorCode = 'ERR_REMOTING_ABORTED';
  /** The caller cancelled the call: making it again is the caller's decision, not a retry. */
  override readonly retriable: boolean = false;
  readonly opaque: number;
  readonly code: number;
  readonly elapsedMs: number;
  constructor(addr: string, opaque: number, code: number, elapsedMs: number, options?: { cause?: unknown }) {
    super(addr, `${describeCall(code, opaque)} to ${addr} aborted after ${Math.round(elapsedMs)} ms`, options);
    this.opaque = opaque;
    this.code = code;
    this.elapsedMs = elapsedMs;
  }
}

/**
 * The outbound queue of a connection is full: the peer reads slower than we write and the bound
 * (`maxQueuedBytes` / `maxQueuedFrames`) was hit. The frame was not sent; the connection stays open.
 * @category Errors
 */
export class RemotingBackpressureError extends RemotingError {
  override readonly name = 'RemotingBackpressureError';
  override readonly errorCode = 'ERR_REMOTING_BACKPRESSURE';
  override readonly retriable: boolean = true;
  readonly code: number;
  readonly queuedBytes: number;
  readonly queuedFrames: number;
  readonly frameBytes: number;
  constructor(
    addr: string,
    code: number,
    queuedBytes: number,
    queuedFrames: number,
    frameBytes: number,
    limit: string,
  ) {
    super(
      addr,
      `outbound queue to ${addr} is full (${queuedFrames} frames, ${queuedBytes} bytes queued, limit ${limit}); ` +
        `${requestCodeName(code)} (code ${code}, ${frameBytes} bytes) not sent`,
    );
    this.code = code;
    this.queuedBytes = queuedBytes;
    this.queuedFrames = queuedFrames;
    this.frameBytes = frameBytes;
  }
}

/**
 * Response codes after which the same request may succeed if retried (possibly on another broker):
 * the set DefaultMQProducer retries on, plus the transient busy / flow-control / go-away answers.
 */
const RETRIABLE_CODES: ReadonlySet<number> = new Set([
  ResponseCode.SYSTEM_ERROR,
  ResponseCode.SYSTEM_BUSY,
  ResponseCode.SERVICE_NOT_AVAILABLE,
  ResponseCode.TOPIC_NOT_EXIST,
  ResponseCode.NO_PERMISSION,
  ResponseCode.NO_BUYER_ID,
  ResponseCode.NOT_IN_CURRENT_UNIT,
  ResponseCode.FLOW_CONTROL,
  ResponseCode.GO_AWAY,
  // A static topic's logic queue moved to another broker (RIP-21 remapping): the refreshed route names it.
  ResponseCode.NOT_LEADER_FOR_QUEUE,
]);

export function isRetriableResponseCode(code: number): boolean {
  return RETRIABLE_CODES.has(code);
}

/**
 * A broker or name server answered with a code other than the one the caller expected.
 * @category Errors
 */
export class BrokerError extends RocketwireError {
  override readonly name: string = 'BrokerError';
  override readonly errorCode: string = 'ERR_BROKER';
  readonly code: number;
  readonly remark: string | null;
  /** From the response code (isRetriableResponseCode) unless the caller knows better. */
  override readonly retriable: boolean;
  /** Address the response came from, when known. */
  readonly addr: string | undefined;
  /** Request code of the call that got this answer, when known. */
  readonly requestCode: number | undefined;
  constructor(
    code: number,
    remark: string | null,
    options?: { addr?: string; requestCode?: number; retriable?: boolean; cause?: unknown },
  ) {
    const call = options?.requestCode !== undefined ? `${requestCodeName(options.requestCode)} ` : '';
    const from = options?.addr !== undefined ? ` from ${options.addr}` : '';
    const hint = brokerAnswerHint(code, remark);
    super(
      `${call}failed${from}: ${responseCodeName(code)} (${code})${remark ? `: ${remark}` : ''}${hint ? ` (${hint})` : ''}`,
      options,
    );
    this.code = code;
    this.remark = remark;
    this.retriable = options?.retriable ?? isRetriableResponseCode(code);
    this.addr = options?.addr;
    this.requestCode = options?.requestCode;
  }
}

/**
 * What to do about a broker or proxy answer whose remark alone does not say. A 5.x proxy checks a
 * topic's `message.type` attribute and refuses a normal send to a topic the broker auto-created
 * (type UNSPECIFIED) with MESSAGE_ILLEGAL "TopicMessageType validate failed, the expected type is
 * UNSPECIFIED, but actual type is NORMAL" (measured on 5.5.0, test/interop/real-broker-proxy.test.ts).
 */
function brokerAnswerHint(code: number, remark: string | null): string | null {
  if (
    code === ResponseCode.MESSAGE_ILLEGAL &&
    remark !== null &&
    /TopicMessageType validate failed, the expected type is (UNSPECIFIED|MIXED)/.test(remark)
  ) {
    return "the proxy refuses this topic's message type: create the topic with the attribute +message.type=NORMAL (mqadmin updateTopic -a +message.type=NORMAL); topics the broker auto-creates have none";
  }
  return null;
}

/** Turn a response into a BrokerError (whatever its code). */
export function brokerErrorFromResponse(
  response: Pick<RemotingCommand, 'code' | 'remark'>,
  context?: { addr?: string; requestCode?: number },
): BrokerError {
  return new BrokerError(response.code, response.remark, context);
}

/**
 * Return the response when its code is SUCCESS (or one of `accept`), otherwise throw a BrokerError.
 */
export function checkResponse(
  response: RemotingCommand,
  context?: { addr?: string; requestCode?: number; accept?: readonly number[] },
): RemotingCommand {
  if (response.code === ResponseCode.SUCCESS) return response;
  if (context?.accept?.includes(response.code)) return response;
  throw brokerErrorFromResponse(response, context);
}

/**
 * A peer sent more responses to requests this connection never made (opaques it never sent, not
 * late answers to calls that timed out or were aborted) than `maxUnmatchedResponses` allows: the
 * connection is closed with this error as its reason (calls in flight fail with
 * RemotingClosedError, `cause` this). A real broker or name server answers only what it was asked;
 * a flood of unsolicited answers is a broken or hostile peer, and each one costs a decode.
 * @category Errors
 */
export class RemotingUnmatchedResponsesError extends RemotingError {
  override readonly name = 'RemotingUnmatchedResponsesError';
  override readonly errorCode = 'ERR_REMOTING_UNMATCHED_RESPONSES';
  /** The connection is reopened on the next call; the peer decides whether it misbehaves again. */
  override readonly retriable: boolean = true;
  /** The frame field at fault: `opaque`. */
  readonly field = 'opaque';
  /** The option that bounds it. */
  readonly option = 'maxUnmatchedResponses';
  readonly limit: number;
  /** Opaque and request code of the last unmatched response. */
  readonly opaque: number;
  readonly code: number;
  constructor(addr: string, limit: number, opaque: number, code: number) {
    super(
      addr,
      `${addr} sent ${limit} responses to requests never made on this connection (last: opaque ${opaque}, code ${code}); ` +
        `closing it: the count reached maxUnmatchedResponses (${limit}); raise the option maxUnmatchedResponses if this peer is trusted`,
    );
    this.limit = limit;
    this.opaque = opaque;
    this.code = code;
  }
}

/**
 * A remoting address that is not "host:port" (or "[v6]:port"); `addr` is the text given.
 * @category Errors
 */
export class AddressError extends RocketwireError {
  override readonly name = 'AddressError';
  override readonly errorCode = 'ERR_ADDRESS';
  readonly addr: string;
  constructor(addr: string, what: string) {
    super(`address "${addr}" ${what}`);
    this.addr = addr;
  }
}
