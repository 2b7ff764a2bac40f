import { ResponseCode, type SerializeTypeName } from './codes.js';
import { createRequest, createResponse, type RemotingCommand } from './command.js';
import type { HeaderCodec } from './custom-header/define.js';
import type {
  BodySpec,
  Operation,
  OperationRequest,
  OperationRequestBody,
  OperationResponse,
  OperationResponseBody,
} from './operation.js';

/**
 * A row of the operation table turned into frames and back: the only place that builds a
 * request's or a response's `extFields` and body from typed values. The client's `call` and
 * `serve` (lib/client/operation-call.ts) and the broker's `serve` and `callClient`
 * (lib/broker/processor/request-processor.ts) are built on these four functions.
 */

/** How a request is stamped: the sender's language, version and header serialization, and oneway. */
export interface RequestFrameInit {
  readonly language?: string;
  readonly version?: number;
  readonly serializeType?: SerializeTypeName;
  readonly oneway?: boolean;
  /** Extra keys written after the row's (the client's namespaceV2 `nsd`/`ns`, Java's RPC hooks). */
  readonly stampExtFields?: (ext: Record<string, string>) => void;
}

/** The request body of `op` by its spec: the codec's bytes, the raw bytes, or null for none. */
export function encodeRequestBody<O extends Operation>(
  op: O,
  body: OperationRequestBody<O> | undefined,
): Buffer | null {
  const spec = op.requestBody as BodySpec<unknown>;
  return spec === 'none' || body === undefined ? null : spec === 'raw' ? (body as Buffer) : spec.encode(body);
}

/** The request of `op` with its body already encoded (one heartbeat body for every broker). */
export function encodeOperationRequest<O extends Operation>(
  op: O,
  header: OperationRequest<O>,
  bytes: Buffer | null,
  init: RequestFrameInit = {},
): RemotingCommand {
  const ext = (op.request as HeaderCodec<OperationRequest<O>>).encode(header);
  init.stampExtFields?.(ext);
  return createRequest(op.code, {
    // The codec's output is used as is: ACL signing writes the signed fields to a copy. A header
    // without fields travels as no extFields at all, as the 4.9 client sends HEART_BEAT and
    // LOCK_BATCH_MQ (a 5.x client sends `{}`; brokers read both alike).
    extFields: hasAnyKey(ext) ? ext : null,
    body: bytes,
    language: init.language,
    version: init.version,
    serializeType: init.serializeType,
    oneway: init.oneway,
  });
}

/**
 * A request as its row reads it: the header by the request codec (a missing or malformed field
 * throws HeaderFieldError), the body by the request body spec (a codec's ProtocolError; `'raw'`
 * gives the bytes, empty when absent; `'none'` undefined).
 */
export function decodeOperationRequest<O extends Operation>(
  op: O,
  request: Pick<RemotingCommand, 'extFields' | 'body'>,
): { header: OperationRequest<O>; body: OperationRequestBody<O> } {
  const header = (op.request as HeaderCodec<OperationRequest<O>>).decode(request.extFields);
  const spec = op.requestBody as BodySpec<unknown>;
  const body =
    spec === 'none' ? undefined : spec === 'raw' ? (request.body ?? EMPTY) : spec.decode(request.body ?? EMPTY);
  return { header, body: body as OperationRequestBody<O> };
}

/**
 * What a served operation answers: a code (SUCCESS when absent), the response header by the row's
 * response codec (no extFields when absent), the body by the row's response body spec, or bytes
 * already encoded (`bodyBytes`), a remark and the version to stamp.
 */
export interface OperationAnswer<O> {
  readonly code?: number;
  readonly remark?: string | null;
  readonly header?: OperationResponse<O>;
  readonly body?: OperationResponseBody<O>;
  /** The body already encoded by the row's codec (a body built once and answered many times). */
  readonly bodyBytes?: Buffer | null;
  readonly version?: number;
  /** Never set: keeps an encoded RemotingCommand from passing for an answer. */
  readonly opaque?: never;
}

/** The response of `op` to `request`, encoded with the row: the only builder of a served answer. */
export function encodeOperationResponse<O extends Operation>(
  op: O,
  request: Pick<RemotingCommand, 'opaque' | 'serializeType'>,
  answer: OperationAnswer<O>,
): RemotingCommand {
  const spec = op.responseBody as BodySpec<unknown>;
  let body: Buffer | null = answer.bodyBytes ?? null;
  if (answer.body !== undefined && spec !== 'none')
    body = spec === 'raw' ? (answer.body as Buffer) : spec.encode(answer.body);
  return createResponse(request, answer.code ?? ResponseCode.SUCCESS, {
    extFields:
      answer.header === undefined
        ? undefined
        : (op.response as HeaderCodec<OperationResponse<O>>).encode(answer.header as OperationResponse<O>),
    body,
    remark: answer.remark,
    version: answer.version,
  });
}

/**
 * The response body as the row's spec reads it: the codec's value (null when the response
 * carries no body, as Java skips decoding a null body), the bytes for `'raw'` (null when absent),
 * nothing for `'none'`. A body that does not parse is the codec's ProtocolError.
 */
export function decodeOperationResponseBody<O extends Operation>(op: O, res: Pick<RemotingCommand, 'body'>): unknown {
  const spec = op.responseBody as BodySpec<unknown>;
  if (spec === 'none') return undefined;
  if (spec === 'raw') return res.body;
  return res.body === null || res.body.length === 0 ? null : spec.decode(res.body);
}

/**
 * Adds fields a second codec encoded (`SendResponseTraceFields.encode(…)`) after a frame's own, in
 * place: the fields every send answer carries whatever its code, or an RPC hook's request fields.
 */
export function appendHeaderFields(cmd: RemotingCommand, encoded: Readonly<Record<string, string>>): RemotingCommand {
  Object.assign((cmd.extFields ??= {}), encoded);
  return cmd;
}

const EMPTY = Buffer.alloc(0);

function hasAnyKey(o: Record<string, string>): boolean {
  for (const _ in o) return true;
  return false;
}
