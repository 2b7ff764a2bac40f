import {
  decodeOperationRequest,
  decodeOperationResponseBody,
  encodeOperationRequest,
  encodeOperationResponse,
  encodeRequestBody,
  HeaderFieldError,
  ResponseCode,
  type BodySpec,
  type HeaderCodec,
  type Operation,
  type OperationAnswer,
  type OperationAnswerCode,
  type OperationRequest,
  type OperationRequestBody,
  type OperationResponse,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/internal.js';
import {
  brokerErrorFromResponse,
  type RemotingClient,
  type RemotingConnection,
  type RequestProcessor,
} from '../remoting/index.js';
import { ResponseFieldError } from './errors.js';
import { stampNamespaceV2 } from './namespace.js';

/**
 * The client's one call path and one serve path, both built from protocol's operation table: the
 * row's codecs encode the request header and body and decode the answer (`call`), or decode a
 * broker-initiated request and encode its answer (`serve`), so no caller builds `extFields` or
 * parses them by hand.
 */

export { encodeRequestBody };

/** What a client stamps on every request it builds. */
export interface RequestStamp {
  readonly language: string;
  readonly version: number;
  readonly serializeType: SerializeTypeName;
  /** namespaceV2: stamped as extFields nsd/ns on every request (Java's NamespaceRpcHook); "" or absent for none. */
  readonly namespaceV2?: string;
}

/**
 * A response body as the operation's spec reads it: the codec's value (null when the response
 * carries no body, as Java skips decoding a null body), the bytes for `'raw'` (null when absent),
 * nothing for `'none'`.
 */
export type ReplyBody<B> = B extends { decode(body: Buffer | Uint8Array): infer T }
  ? T | null
  : B extends 'raw'
    ? Buffer | null
    : undefined;
export type OperationReplyBody<O> =
  O extends Operation<unknown, unknown, BodySpec<unknown>, infer B, number> ? ReplyBody<B> : never;

/** A decoded answer: its code, remark and version, the header by the row's response codec, the body by its body spec. */
export interface Reply<O> {
  readonly code: number;
  readonly remark: string | null;
  /** The version the peer stamped on its answer (a broker's heartbeat answer says which release it runs). */
  readonly version: number;
  readonly header: OperationResponse<O>;
  readonly body: OperationReplyBody<O>;
}

/**
 * What `call` resolves to: SUCCESS or one of the row's answer codes, so a caller switches on
 * `reply.code`. A SUCCESS header is decoded before the call resolves (a missing field is a
 * ResponseFieldError then); an answer code's header is decoded when first read, since some
 * answers carry none (QUERY_NOT_FOUND is decided by its code alone, as Java's
 * MQClientAPIImpl.queryConsumerOffset does).
 */
export type CallReply<O> = Reply<O> & { readonly code: typeof ResponseCode.SUCCESS | OperationAnswerCode<O> };

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Options of `call`: oneway resolves once the frame is handed to the socket, with no reply. */
export interface CallPathOptions extends CallOptions {
  oneway?: boolean;
  /** The request body already encoded by the row's codec (one heartbeat body for every broker); replaces `body`. */
  encodedBody?: Buffer | null;
  /** The request's remark (END_TRANSACTION carries the producer's reason there). */
  remark?: string | null;
}

/** The request of `op`: header by its request codec, body by its request body spec, stamped as `stamp` says. */
export function operationRequest<O extends Operation>(
  op: O,
  header: OperationRequest<O>,
  body: OperationRequestBody<O> | undefined,
  stamp: RequestStamp,
  oneway = false,
): RemotingCommand {
  return encodedOperationRequest(op, header, encodeRequestBody(op, body), stamp, oneway);
}

/** operationRequest with the body already encoded (one heartbeat body for every broker). */
export function encodedOperationRequest<O extends Operation>(
  op: O,
  header: OperationRequest<O>,
  bytes: Buffer | null,
  stamp: RequestStamp,
  oneway = false,
): RemotingCommand {
  const ns = stamp.namespaceV2;
  return encodeOperationRequest(op, header, bytes, {
    language: stamp.language,
    version: stamp.version,
    serializeType: stamp.serializeType,
    oneway,
    stampExtFields: ns ? (ext) => stampNamespaceV2(ext, ns) : undefined,
  });
}

/**
 * The response header by the row's codec; a missing or malformed field becomes a
 * ResponseFieldError naming the field, the request code and the peer.
 */
export function decodeResponseHeader<O extends Operation>(
  op: O,
  res: RemotingCommand,
  addr: string,
): OperationResponse<O> {
  try {
    return (op.response as HeaderCodec<OperationResponse<O>>).decode(res.extFields);
  } catch (err) {
    if (err instanceof HeaderFieldError) throw new ResponseFieldError(err.field, op.code, addr, { cause: err });
    throw err;
  }
}

/** The response body by the row's spec (see ReplyBody). A body that does not parse is the codec's ProtocolError. */
export function decodeResponseBody<O extends Operation>(op: O, res: RemotingCommand): OperationReplyBody<O> {
  return decodeOperationResponseBody(op, res) as OperationReplyBody<O>;
}

/** A SUCCESS response decoded; any other code is a BrokerError naming the peer and the request. */
export function readReply<O extends Operation>(op: O, res: RemotingCommand, addr: string): Reply<O> {
  if (res.code !== ResponseCode.SUCCESS) throw brokerErrorFromResponse(res, { addr, requestCode: op.code });
  return {
    code: res.code,
    remark: res.remark,
    version: res.version,
    header: decodeResponseHeader(op, res, addr),
    body: decodeResponseBody(op, res),
  };
}

/**
 * A response read as `call` reads it: SUCCESS as readReply does, a row's answer code with its
 * header decoded on first read, anything else a BrokerError.
 */
export function readCallReply<O extends Operation>(op: O, res: RemotingCommand, addr: string): CallReply<O> {
  if (res.code === ResponseCode.SUCCESS) return readReply(op, res, addr) as CallReply<O>;
  if (!op.answers.includes(res.code)) throw brokerErrorFromResponse(res, { addr, requestCode: op.code });
  return new AnswerReply(op, res, addr) as unknown as CallReply<O>;
}

/** A non-SUCCESS answer of the row: the body decoded now, the header when first read. */
class AnswerReply<O extends Operation> implements Reply<O> {
  readonly code: number;
  readonly remark: string | null;
  readonly version: number;
  readonly body: OperationReplyBody<O>;
  private decoded: { header: OperationResponse<O> } | null = null;
  constructor(
    private readonly op: O,
    private readonly res: RemotingCommand,
    private readonly addr: string,
  ) {
    this.code = res.code;
    this.remark = res.remark;
    this.version = res.version;
    this.body = decodeResponseBody(op, res);
  }
  get header(): OperationResponse<O> {
    this.decoded ??= { header: decodeResponseHeader(this.op, this.res, this.addr) };
    return this.decoded.header;
  }
}

/** Whether `code` answers `op` (SUCCESS or one of the row's `answers`). */
export function isAnswer(op: Operation, code: number): boolean {
  return code === ResponseCode.SUCCESS || op.answers.includes(code);
}

/**
 * The client's one call path: send `op` to `addr` encoded by its row and read the answer by it.
 * Resolves to SUCCESS or one of the row's answer codes (CallReply); any other code is a
 * BrokerError, a garbled SUCCESS header a ResponseFieldError. `oneway` sends without a reply.
 */
export function call<O extends Operation>(
  remoting: RemotingClient,
  stamp: RequestStamp,
  addr: string,
  op: O,
  header: OperationRequest<O>,
  body: OperationRequestBody<O> | undefined,
  opts: CallPathOptions & { oneway: true },
): Promise<void>;
export function call<O extends Operation>(
  remoting: RemotingClient,
  stamp: RequestStamp,
  addr: string,
  op: O,
  header: OperationRequest<O>,
  body: OperationRequestBody<O> | undefined,
  opts?: CallPathOptions & { oneway?: false },
): Promise<CallReply<O>>;
export async function call<O extends Operation>(
  remoting: RemotingClient,
  stamp: RequestStamp,
  addr: string,
  op: O,
  header: OperationRequest<O>,
  body: OperationRequestBody<O> | undefined,
  opts: CallPathOptions = {},
): Promise<CallReply<O> | void> {
  const bytes = opts.encodedBody !== undefined ? opts.encodedBody : encodeRequestBody(op, body);
  const request = encodedOperationRequest(op, header, bytes, stamp, opts.oneway === true);
  if (opts.remark !== undefined) request.remark = opts.remark;
  if (opts.oneway) return remoting.invokeOneway(addr, request);
  const res = await remoting.invoke(addr, request, invokeOptions(opts));
  return readCallReply(op, res, addr);
}

/** Send `op` to `addr` and decode its SUCCESS answer (a row's answer code is a BrokerError here too). */
export async function invokeOperation<O extends Operation>(
  remoting: RemotingClient,
  stamp: RequestStamp,
  addr: string,
  op: O,
  header: OperationRequest<O>,
  body: OperationRequestBody<O> | undefined,
  opts: CallOptions,
): Promise<Reply<O>> {
  const res = await remoting.invoke(addr, operationRequest(op, header, body, stamp), opts);
  return readReply(op, res, addr);
}

function invokeOptions(opts: CallOptions): CallOptions {
  return opts.signal ? { timeoutMs: opts.timeoutMs, signal: opts.signal } : { timeoutMs: opts.timeoutMs };
}

/**
 * A broker-initiated request as a client handler sees it: the header by the row's codec, the
 * body by its spec (null when the request carries none, as Java's ClientRemotingProcessor skips
 * decoding a null body), the request and the connection it came on.
 */
export interface ServedRequest<O> {
  readonly header: OperationRequest<O>;
  readonly body: OperationRequestBody<O> | null;
  readonly request: RemotingCommand;
  readonly conn: RemotingConnection;
}

/** A client handler of a broker-initiated request: its answer, or null for none (oneway requests). */
export type ServeHandler<O> = (r: ServedRequest<O>) => OperationAnswer<O> | null | Promise<OperationAnswer<O> | null>;

/**
 * The processor of `op` for broker-initiated requests: decode with the row, call the handler,
 * encode its answer with the row. A header that does not decode throws HeaderFieldError, which
 * the connection answers with SYSTEM_ERROR (Java's decodeCommandCustomHeader throws the same way).
 */
export function serveProcessor<O extends Operation>(op: O, handler: ServeHandler<O>): RequestProcessor {
  const bodyless = { ...op, requestBody: 'none' as const };
  return (request, conn) => {
    const empty = request.body === null || request.body.length === 0;
    const decoded =
      empty && typeof op.requestBody === 'object'
        ? { header: decodeOperationRequest(bodyless, request).header as OperationRequest<O>, body: null }
        : decodeOperationRequest(op, request);
    const answer = handler({ header: decoded.header, body: decoded.body, request, conn });
    if (answer === null) return null;
    if (answer instanceof Promise)
      return answer.then((a) => (a === null ? null : encodeOperationResponse(op, request, a)));
    return encodeOperationResponse(op, request, answer);
  };
}

/** Serve `op` on `remoting` (broker-initiated requests) with `handler`, through the row's codecs. */
export function serve<O extends Operation>(
  remoting: Pick<RemotingClient, 'registerProcessor'>,
  op: O,
  handler: ServeHandler<O>,
): void {
  remoting.registerProcessor(op.code, serveProcessor(op, handler));
}
