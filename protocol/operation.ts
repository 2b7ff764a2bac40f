import { RequestCode, type ResponseCode } from './codes.js';
import { defineHeader, type HeaderCodec } from './custom-header/define.js';

/**
 * One row of the operation table (operations.ts): for a request code, the codec of its request
 * header, of its response header and of both bodies, and the response codes other than SUCCESS
 * that are answers. The client's calls (lib/client) and the servers' handlers (lib/broker, the
 * client's broker-initiated processors) are both built from these rows, so each wire fact lives
 * here once.
 */

/** A JSON (or binary) body codec of protocol/body. */
export interface BodyCodec<T> {
  encode(value: T): Buffer;
  decode(body: Buffer | Uint8Array): T;
}

/**
 * What travels in a body: a codec, `'raw'` bytes handed through as they are (stored messages, a
 * batch, a message body), or `'none'` (no body; one that arrives anyway is ignored, as Java does).
 */
export type BodySpec<T> = BodyCodec<T> | 'raw' | 'none';

type BodyValue<B> = B extends BodyCodec<infer T> ? T : B extends 'raw' ? Buffer : undefined;

/** A response code number (ResponseCode's values). */
export type ResponseCodeValue = (typeof ResponseCode)[keyof typeof ResponseCode];

/**
 * One row of the operation table: a request code, the header codecs of its request and response,
 * what its two bodies hold, and the response codes other than SUCCESS that are answers.
 */
export interface Operation<
  Req = unknown,
  Res = unknown,
  ReqBody extends BodySpec<unknown> = BodySpec<unknown>,
  ResBody extends BodySpec<unknown> = BodySpec<unknown>,
  A extends number = number,
> {
  /** The request code. */
  readonly code: number;
  /** RequestCode name, for errors and logs. */
  readonly name: string;
  readonly request: HeaderCodec<Req>;
  readonly response: HeaderCodec<Res>;
  readonly requestBody: ReqBody;
  readonly responseBody: ResBody;
  /** Response codes other than SUCCESS that are answers rather than failures (PULL_NOT_FOUND…). */
  readonly answers: readonly number[];
  /** Type carrier only: the row's answer codes as literal types, so a reply's `code` is a union. */
  readonly _answers?: A;
}

/** Any row of the table, whatever its codecs (for code that handles rows generically). */
// biome-ignore lint/suspicious/noExplicitAny: a row of any codec types; each use narrows it again
export type AnyOperation = Operation<any, any, BodySpec<any>, BodySpec<any>, number>;

/** Request header fields of an operation. */
export type OperationRequest<O> =
  O extends Operation<infer Req, unknown, BodySpec<unknown>, BodySpec<unknown>, number> ? Req : never;
/** Response header fields of an operation. */
export type OperationResponse<O> =
  O extends Operation<unknown, infer Res, BodySpec<unknown>, BodySpec<unknown>, number> ? Res : never;
/** Decoded request body of an operation (Buffer for raw, undefined for none). */
export type OperationRequestBody<O> =
  O extends Operation<unknown, unknown, infer B, BodySpec<unknown>, number> ? BodyValue<B> : never;
/** Decoded response body of an operation (Buffer for raw, undefined for none). */
export type OperationResponseBody<O> =
  O extends Operation<unknown, unknown, BodySpec<unknown>, infer B, number> ? BodyValue<B> : never;
/** The response codes other than SUCCESS that answer an operation (its row's `answers`). */
export type OperationAnswerCode<O> =
  O extends Operation<unknown, unknown, BodySpec<unknown>, BodySpec<unknown>, infer A> ? A : never;

/** The header of requests and responses that carry no fields. */
export const EmptyHeader = defineHeader('EmptyHeader', {});

/** A row of the table, frozen. */
export function op<
  Req,
  Res,
  ReqBody extends BodySpec<unknown>,
  ResBody extends BodySpec<unknown>,
  A extends ResponseCodeValue = never,
>(
  name: keyof typeof RequestCode,
  row: {
    request: HeaderCodec<Req>;
    response: HeaderCodec<Res>;
    requestBody: ReqBody;
    responseBody: ResBody;
    answers?: readonly A[];
  },
): Operation<Req, Res, ReqBody, ResBody, A> {
  return Object.freeze({
    code: RequestCode[name],
    name,
    request: row.request,
    response: row.response,
    requestBody: row.requestBody,
    responseBody: row.responseBody,
    answers: Object.freeze([...(row.answers ?? [])]),
  });
}
