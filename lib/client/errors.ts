import { OptionError, RocketwireError, requestCodeName } from '../../protocol/index.js';

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

/**
 * A name server's route for a topic carries a count past the client's bound (a QueueData's
 * readQueueNums or writeQueueNums, the queues of the whole route, its brokers or a broker's
 * addresses), or a count that is not a non-negative integer. The route is refused before any
 * queue list is built from it (2^31 queues would be 2^31 objects); the last good route stays in
 * use. `addr` is the name server, `field` the route field at fault, `value` what it said, `limit`
 * the bound and `option` the client option that sets it (ClientOptions.maxRouteQueues /
 * maxRouteBrokers). Not retriable: the same name server answers the same route.
 * @category Errors
 */
export class RouteLimitError extends MQClientError {
  override readonly name = 'RouteLimitError';
  override readonly errorCode = 'ERR_ROUTE_LIMIT';
  override readonly retriable: boolean = false;
  readonly addr: string;
  readonly topic: string;
  readonly field: string;
  readonly value: number;
  readonly limit: number;
  readonly option: string;
  constructor(f: { addr: string; topic: string; field: string; value: number; limit: number; option: string }) {
    const bad = !Number.isInteger(f.value) || f.value < 0;
    super(
      bad
        ? `route of ${f.topic} from name server ${f.addr}: ${f.field} is ${f.value}, not an integer in [0, ${f.limit}]; route refused`
        : `route of ${f.topic} from name server ${f.addr}: ${f.field} is ${f.value}, which exceeds ${f.option} (${f.limit}); ` +
            `route refused; raise the option ${f.option} if the layout is real`,
    );
    this.addr = f.addr;
    this.topic = f.topic;
    this.field = f.field;
    this.value = f.value;
    this.limit = f.limit;
    this.option = f.option;
  }
}

/**
 * A broker's pull answer whose offsets cannot be true: `nextBeginOffset` before the offset asked
 * for (it would move the consumer backwards and deliver again what it consumed) or negative, past
 * the queue's `maxOffset` on a FOUND answer, `minOffset` above `maxOffset`, an OFFSET_ILLEGAL
 * correction outside [minOffset, maxOffset], or a message whose queue offset lies outside the
 * range the pull covers (committed, it would carry the offset past messages never consumed). The
 * pull fails with this error and the consumer's position does not move; it pulls the same offset
 * again after its back-off. `addr` is the broker, `field` the header field or `queueOffset` of a
 * message, `value` what the broker said, `requestOffset` the offset asked for.
 * @category Errors
 */
export class PullOffsetError extends MQClientError {
  override readonly name = 'PullOffsetError';
  override readonly errorCode = 'ERR_PULL_OFFSET';
  /** The broker may answer sensibly next time (a slave that caught up, a restarted master). */
  override readonly retriable: boolean = true;
  readonly addr: string;
  readonly topic: string;
  readonly queueId: number;
  readonly field: string;
  readonly value: number;
  readonly requestOffset: number;
  constructor(f: {
    addr: string;
    topic: string;
    queueId: number;
    field: string;
    value: number;
    requestOffset: number;
    why: string;
  }) {
    super(
      `pull of ${f.topic}/${f.queueId} at offset ${f.requestOffset} from ${f.addr}: ${f.field} ${f.value} ${f.why}; answer refused, the offset stays at ${f.requestOffset}`,
    );
    this.addr = f.addr;
    this.topic = f.topic;
    this.queueId = f.queueId;
    this.field = f.field;
    this.value = f.value;
    this.requestOffset = f.requestOffset;
  }
}

/**
 * A request a broker sent to this client was refused because it cannot be right: a
 * RESET_CONSUMER_CLIENT_OFFSET whose offset is negative or outside the queue's [min, max] offsets
 * on its broker (or whose table is larger than maxRouteQueues), a CONSUME_MESSAGE_DIRECTLY for a
 * topic the group does not subscribe. Logged at warn through the client's logger (and, for
 * CONSUME_MESSAGE_DIRECTLY, its message is the answer's remark); nothing is changed. `addr` is the
 * broker that sent it, `requestCode` the request, `field` the part at fault and `value` what it said.
 * @category Errors
 */
export class BrokerRequestRefusedError extends MQClientError {
  override readonly name = 'BrokerRequestRefusedError';
  override readonly errorCode = 'ERR_BROKER_REQUEST_REFUSED';
  override readonly retriable: boolean = false;
  readonly addr: string;
  readonly requestCode: number;
  readonly field: string;
  readonly value: string;
  /** The option that bounds it, when a limit was passed. */
  readonly option: string | undefined;
  constructor(f: {
    addr: string;
    requestCode: number;
    field: string;
    value: string | number;
    why: string;
    option?: string;
  }) {
    super(`${requestCodeName(f.requestCode)} from ${f.addr} refused: ${f.field} ${f.value} ${f.why}`);
    this.addr = f.addr;
    this.requestCode = f.requestCode;
    this.field = f.field;
    this.value = String(f.value);
    this.option = f.option;
  }
}

/**
 * Raised for a client option outside its range; `option` names it.
 * @category Errors
 */
export class ClientOptionError extends OptionError {
  override readonly name = 'ClientOptionError';
  override readonly errorCode = 'ERR_CLIENT_OPTION';
  constructor(option: string, message: string) {
    super(option, `option ${option}: ${message}`);
  }
}

/**
 * The address server that tells the name server list (`namesrvDomain`, Java's
 * `rocketmq.namesrv.domain`) could not be reached or gave no usable list: `url` is what was asked,
 * `status` the HTTP status when one came, `cause` the socket or parse error. Thrown by `start()`
 * when no list was ever fetched (unless startWithoutNameServer); later, the polls keep the last
 * list and report it as a `'nameServerError'` event and a warning.
 * @category Errors
 */
export class AddressServerError extends MQClientError {
  override readonly name = 'AddressServerError';
  override readonly errorCode = 'ERR_ADDRESS_SERVER';
  override readonly retriable: boolean = true;
  /** The address server's URL. */
  readonly url: string;
  /** The HTTP status of the answer, when one came. */
  readonly status: number | undefined;
  constructor(url: string, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(`address server ${url}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.url = url;
    this.status = options.status;
  }
}
