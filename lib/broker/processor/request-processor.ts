import createDebug from '../../debug.js';
import {
  HeaderFieldError,
  ProtocolError,
  ResponseCode,
  createResponse,
  type BodySpec,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type RemotingCommand,
} from '../../../protocol/index.js';
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

export type OperationHandler<O> = (r: IncomingRequest<O>) => RemotingCommand | null | Promise<RemotingCommand | null>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any, BodySpec<any>, BodySpec<any>>;

const EMPTY = Buffer.alloc(0);

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

function decodeBody(spec: BodySpec<unknown>, body: Buffer | null): unknown {
  if (spec === 'none') return undefined;
  if (spec === 'raw') return body ?? EMPTY;
  return spec.decode(body ?? EMPTY);
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
      header = op.request.decode(request.extFields) as OperationRequest<O>;
      body = decodeBody(op.requestBody, request.body) as OperationRequestBody<O>;
    } catch (err) {
      if (err instanceof HeaderFieldError) {
        log('%s from %s: %s', op.name, conn.remoteAddress, err.message);
        return fail(request, ResponseCode.SYSTEM_ERROR, undecodableHeaderRemark(err));
      }
      if (err instanceof ProtocolError) {
        log('%s from %s: %s', op.name, conn.remoteAddress, err.message);
        return fail(request, ResponseCode.SYSTEM_ERROR, undecodableBodyRemark(err));
      }
      throw err;
    }
    const badName = requestNameError(op, header as Record<string, unknown>, body);
    if (badName) {
      log('%s from %s: %s', op.name, conn.remoteAddress, badName);
      return fail(request, ResponseCode.INVALID_PARAMETER, badName);
    }
    return handler({ header, body, request, conn });
  };
}

/** Register `handler` for the operation's request code. */
export function registerOperation<O extends AnyOperation>(
  server: RemotingServer,
  op: O,
  handler: OperationHandler<O>,
): void {
  server.registerProcessor(op.code, operationProcessor(op, handler));
}

export function ok(req: RemotingCommand, init: Parameters<typeof createResponse>[2] = {}): RemotingCommand {
  return createResponse(req, ResponseCode.SUCCESS, init);
}

export function fail(req: RemotingCommand, code: number, remark: string): RemotingCommand {
  return createResponse(req, code, { remark });
}
