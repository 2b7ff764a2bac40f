import { RocketwireError, requestCodeName } from '../../protocol/index.js';

/**
 * A client-side failure that is not a broker answer (no route, group clash, no name server).
 * @category Errors
 */
export class MQClientError extends RocketwireError {
  override readonly name: string = 'MQClientError';
  override readonly errorCode: string = 'ERR_CLIENT';
}

/**
 * A client was called in a state that does not allow the call: before `start()`, after
 * `shutdown()`, or `start()` twice. `state` is the client's state at the call. Not retriable: the
 * call needs the application to start the client (or a new one), not another try.
 * @category Errors
 */
export class ClientStateError extends MQClientError {
  override readonly name: string = 'ClientStateError';
  override readonly errorCode: string = 'ERR_CLIENT_STATE';
  readonly state: string;
  constructor(state: string, message: string) {
    super(message);
    this.state = state;
  }
}

/**
 * Every configured name server failed; `failures` has one entry per address tried, in order.
 * @category Errors
 */
export class NameServerUnavailableError extends MQClientError {
  override readonly name = 'NameServerUnavailableError';
  override readonly errorCode = 'ERR_NAMESRV_UNAVAILABLE';
  override readonly retriable: boolean = true;
  readonly failures: { addr: string; error: Error }[];
  constructor(failures: { addr: string; error: Error }[]) {
    const what = failures.map((f) => `${f.addr}: ${firstLine(f.error.message)}`).join('; ');
    super(`no name server answered (${what})`, { cause: failures[failures.length - 1]?.error });
    this.failures = failures;
  }
}

/**
 * A response whose header lacks a field the operation's response codec requires, or carries one
 * that Java could not parse (an `offset` that is not a long). Raised instead of reading a default:
 * a garbled offset read as 0 would rewind a consumer. `cause` is the codec's HeaderFieldError.
 * @category Errors
 */
export class ResponseFieldError extends MQClientError {
  override readonly name = 'ResponseFieldError';
  override readonly errorCode = 'ERR_RESPONSE_FIELD';
  /** The `extFields` key at fault. */
  readonly field: string;
  /** Request code of the call this response answers. */
  readonly requestCode: number;
  /** Address the response came from. */
  readonly addr: string;
  constructor(field: string, requestCode: number, addr: string, options: { cause: Error }) {
    super(`${requestCodeName(requestCode)} response from ${addr}: ${options.cause.message}`, options);
    this.field = field;
    this.requestCode = requestCode;
    this.addr = addr;
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}
