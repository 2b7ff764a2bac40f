import {
  createRequest,
  HeaderFieldError,
  ResponseCode,
  type BodySpec,
  type HeaderCodec,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type OperationResponse,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/index.js';
import { brokerErrorFromResponse, type RemotingClient } from '../remoting/index.js';
import { ResponseFieldError } from './errors.js';
import { stampNamespaceV2 } from './namespace.js';

/**
 * Calls built from protocol's operation table: the row's codecs encode the request header and
 * body and decode the response, so no caller builds `extFields` or parses them by hand.
 */

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
  O extends Operation<unknown, unknown, BodySpec<unknown>, infer B> ? ReplyBody<B> : never;

/** A decoded answer: its code, remark and version, the header by the row's response codec, the body by its body spec. */
export interface Reply<O> {
  readonly code: number;
  readonly remark: string | null;
  /** The version the peer stamped on its answer (a broker's heartbeat answer says which release it runs). */
  readonly version: number;
  readonly header: OperationResponse<O>;
  readonly body: OperationReplyBody<O>;
}

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
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

/** The request body of `op` by its spec: the codec's bytes, the raw bytes, or null for none. */
export function encodeRequestBody<O extends Operation>(
  op: O,
  body: OperationRequestBody<O> | undefined,
): Buffer | null {
  const spec = op.requestBody as BodySpec<unknown>;
  return spec === 'none' || body === undefined ? null : spec === 'raw' ? (body as Buffer) : spec.encode(body);
}

/** operationRequest with the body already encoded (one heartbeat body for every broker). */
export function encodedOperationRequest<O extends Operation>(
  op: O,
  header: OperationRequest<O>,
  bytes: Buffer | null,
  stamp: RequestStamp,
  oneway = false,
): RemotingCommand {
  const ext = (op.request as HeaderCodec<OperationRequest<O>>).encode(header);
  if (stamp.namespaceV2) stampNamespaceV2(ext, stamp.namespaceV2);
  return createRequest(op.code, {
    // The codec's output is used as is: ACL signing writes the signed fields to a copy. A header
    // without fields travels as no extFields at all, as the 4.9 client sends HEART_BEAT and
    // LOCK_BATCH_MQ (a 5.x client sends `{}`; brokers read both alike).
    extFields: hasAnyKey(ext) ? ext : null,
    body: bytes,
    language: stamp.language,
    version: stamp.version,
    serializeType: stamp.serializeType,
    oneway,
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
  const spec = op.responseBody as BodySpec<unknown>;
  if (spec === 'none') return undefined as OperationReplyBody<O>;
  if (spec === 'raw') return res.body as OperationReplyBody<O>;
  return (res.body === null || res.body.length === 0 ? null : spec.decode(res.body)) as OperationReplyBody<O>;
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

/** Whether `code` answers `op` (SUCCESS or one of the row's `answers`). */
export function isAnswer(op: Operation, code: number): boolean {
  return code === ResponseCode.SUCCESS || op.answers.includes(code);
}

function hasAnyKey(o: Record<string, string>): boolean {
  for (const _ in o) return true;
  return false;
}

/** Send `op` to `addr` and decode its SUCCESS answer. */
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
