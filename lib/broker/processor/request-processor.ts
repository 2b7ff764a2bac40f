import createDebug from '../../debug.js';
import {
  decodeOperationRequest,
  encodeOperationRequest,
  encodeOperationResponse,
  HeaderFieldError,
  ProtocolError,
  ResponseCode,
  type AnyOperation,
  type OperationAnswer,
  type OperationRequest,
  type OperationRequestBody,
  type RemotingCommand,
} from '../../../protocol/internal.js';
import type { RemotingConnection, RemotingServer, RequestProcessor } from '../../remoting/index.js';
import { requestNameError } from '../resource-names.js';

const log = createDebug('rocketwire:broker');

/** A request as a processor sees it: the header and body decoded with the operation's codecs. */
export interface IncomingRequest<O> {
  header: OperationRequest<O>;
  body: OperationRequestBody<O>;
  request: RemotingCommand;
  conn: RemotingConnection;
}

/**
 * What a handler answers: the fields of its answer (code, header, body, remark; see
 * protocol's OperationAnswer), which `serve` encodes with the row; a response the row already
 * encoded (`answerTo`: a long-poll hold that answers later); or null for no answer.
 */
export type ServeResult<O> = OperationAnswer<O> | RemotingCommand | null;

export type OperationHandler<O> = (r: IncomingRequest<O>) => ServeResult<O> | Promise<ServeResult<O>>;

export type { AnyOperation };

/** An answer of any row (a helper's answer that several handlers return). */
export type Answer = OperationAnswer<AnyOperation>;

/**
 * What Java's RemotingCommandException says (RemotingCommand.decodeCommandCustomHeader /
 * checkFields); the Java broker answers a request it cannot decode with SYSTEM_ERROR and
 * `UtilAll.exceptionSimpleDesc(e)`, i.e. the exception's class and message, as the remark
 * (NettyRemotingAbstract's request handler).
 */
const REMOTING_COMMAND_EXCEPTION = 'org.apache.rocketmq.remoting.exception.RemotingCommandException';

/** The remark of the answer to an undecodable header: names the field, as Java's "the custom field <x> is null" does. */
export function undecodableHeaderRemark(err: HeaderFieldError): string {
  const prefix = `header field "${err.field}": `;
  const reason = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  const what = reason.startsWith('missing') ? 'is null' : `is invalid: ${reason}`;
  return `${REMOTING_COMMAND_EXCEPTION}: the custom field <${err.field}> ${what}`;
}

/** The remark of the answer to an undecodable body (the body reader names the path that is wrong). */
export function undecodableBodyRemark(err: ProtocolError): string {
  return `${REMOTING_COMMAND_EXCEPTION}: ${err.message}`;
}

/**
 * The one wrapper every broker processor goes through: decode the request header (and the body,
 * where the row has a codec) with the operation's codecs, call the typed handler, and answer a
 * header or body that does not decode with SYSTEM_ERROR naming the field, as a Java broker does;
 * the connection stays open. A request naming an invalid topic or group (resource-names.ts) is
 * answered INVALID_PARAMETER naming the field, whatever its code, before the handler runs. Errors thrown by the handler itself are left to the connection,
 * which answers SYSTEM_ERROR with their message.
 */
export function operationProcessor<O extends AnyOperation>(op: O, handler: OperationHandler<O>): RequestProcessor {
  return (request, conn) => {
    let header: OperationRequest<O>;
    let body: OperationRequestBody<O>;
    try {
      ({ header, body } = decodeOperationRequest(op, request));
    } catch (err) {
      if (err instanceof HeaderFieldError) {
        log('%s from %s: %s', op.name, conn.remoteAddress, err.message);
        return answerTo(op, request, fail(ResponseCode.SYSTEM_ERROR, undecodableHeaderRemark(err)));
      }
      if (err instanceof ProtocolError) {
        log('%s from %s: %s', op.name, conn.remoteAddress, err.message);
        return answerTo(op, request, fail(ResponseCode.SYSTEM_ERROR, undecodableBodyRemark(err)));
      }
      throw err;
    }
    const badName = requestNameError(op, header as Record<string, unknown>, body);
    if (badName) {
      log('%s from %s: %s', op.name, conn.remoteAddress, badName);
      return answerTo(op, request, fail(ResponseCode.INVALID_PARAMETER, badName));
    }
    const result = handler({ header, body, request, conn });
    if (result instanceof Promise) return result.then((r) => answerTo(op, request, r));
    return answerTo(op, request, result);
  };
}

/**
 * A handler's result as the response frame: an answer encoded with the row (protocol's
 * encodeOperationResponse), a response already encoded by it passed through, null for none.
 */
export function answerTo<O extends AnyOperation>(
  op: O,
  request: RemotingCommand,
  result: ServeResult<O>,
): RemotingCommand | null {
  if (result === null) return null;
  if (isCommand(result)) return result;
  return encodeOperationResponse(op, request, result);
}

function isCommand(r: object): r is RemotingCommand {
  return 'opaque' in r;
}

/**
 * The broker's one serve path: register `handler` for the operation's request code; the request
 * is decoded and the answer encoded with the row (operationProcessor).
 */
export function serve<O extends AnyOperation>(server: RemotingServer, op: O, handler: OperationHandler<O>): void {
  server.registerProcessor(op.code, operationProcessor(op, handler));
}

/** serve, by its older name. */
export const registerOperation = serve;

/** A SUCCESS answer without a header: a body already encoded by the row's codec, a version to stamp. */
export function ok(init: { body?: Buffer | null; version?: number; remark?: string } = {}): OperationAnswer<never> {
  return { bodyBytes: init.body, version: init.version, remark: init.remark };
}

/** A failure answer: `code` and its remark, no header, no body. */
export function fail(code: number, remark: string): OperationAnswer<never> {
  return { code, remark };
}

/**
 * The broker's call path to a client, over the connection the client opened (Java's Broker2Client):
 * `op` encoded with its row, stamped with the broker's version. Oneway resolves once the frame is
 * handed to the socket; otherwise the client's answer is returned as it came.
 */
export function callClient<O extends AnyOperation>(
  conn: RemotingConnection,
  op: O,
  header: OperationRequest<O>,
  body: Buffer | null,
  opts: { version: number; oneway: true },
): Promise<void>;
export function callClient<O extends AnyOperation>(
  conn: RemotingConnection,
  op: O,
  header: OperationRequest<O>,
  body: Buffer | null,
  opts: { version: number; oneway?: false; timeoutMs: number },
): Promise<RemotingCommand>;
export function callClient<O extends AnyOperation>(
  conn: RemotingConnection,
  op: O,
  header: OperationRequest<O>,
  body: Buffer | null,
  opts: { version: number; oneway?: boolean; timeoutMs?: number },
): Promise<RemotingCommand | void> {
  const request = encodeOperationRequest(op, header, body, { version: opts.version, oneway: opts.oneway });
  if (opts.oneway) return conn.invokeOneway(request);
  return conn.invoke(request, { timeoutMs: opts.timeoutMs });
}
