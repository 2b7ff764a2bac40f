import type { DecodedFrame } from './capture-options.js';
import { RequestCode, requestCodeName, ResponseCode, responseCodeName } from '../../protocol/codes.js';
import { isOneway, isResponse, type RemotingCommand } from '../../protocol/command.js';
import { UnsupportedCompressionError } from '../../protocol/errors.js';
import { parseFastjson } from '../../protocol/json/fastjson-parse.js';
import { decodeMessages } from '../../protocol/message-decoder.js';
import type { MessageExt } from '../../protocol/message-ext.js';
import { MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2 } from '../../protocol/message-record.js';

/**
 * A stored message as the decoder prints it: these MessageExt fields, with the body as base64 or a length.
 * @category Capture
 */
export type MessageDescription = Pick<
  MessageExt,
  | 'topic'
  | 'queueId'
  | 'queueOffset'
  | 'commitLogOffset'
  | 'sysFlag'
  | 'bornTimestamp'
  | 'bornHost'
  | 'storeTimestamp'
  | 'storeHost'
  | 'reconsumeTimes'
  | 'properties'
  | 'msgId'
  | 'offsetMsgId'
> & {
  /** The body, decompressed when the sysFlag said so (left out when bodies are not wanted). */
  bodyBase64?: string;
  /** Length of the (decompressed) body; only when bodyBase64 is left out. */
  bodyLength?: number;
};

/**
 * One frame as `rocketwire decode` prints it (one JSON line, one msgpack object). `ts`, `src` and
 * `dst` come from the capture; `requestCode`/`latencyMs` from pairing a response with the request
 * of the same opaque on the same connection.
 * @category Capture
 */
export interface FrameDescription {
  /** Capture time, in seconds since the epoch. */
  ts?: number;
  /** Address ("ip:port") that sent the frame. */
  src?: string;
  /** Address ("ip:port") the frame went to. */
  dst?: string;
  /** Whether the frame is a request or a response (the RPC flag bit). */
  kind: 'request' | 'response';
  /** Request code for requests, response code for responses. */
  code: number;
  /** Request code name for requests, response code name for responses. */
  name: string;
  /** For a response: the code of the request it answers, when that request was seen. */
  requestCode?: number;
  /** For a response: the time since its request, in milliseconds (rounded to microseconds). */
  latencyMs?: number;
  /** The id pairing a response with its request on a connection. */
  opaque: number;
  /** The header flag bits (RPC type and oneway). */
  flag: number;
  /** A oneway request: no response comes. */
  oneway: boolean;
  /** The language the sender announced (JAVA, CPP, …). */
  language: string | null;
  /** The version the sender announced. */
  version: number;
  /** How the header was encoded. */
  serializeType: 'JSON' | 'ROCKETMQ';
  /** The header's remark (an error text in failed responses). */
  remark: string | null;
  /** The header's fields. */
  extFields: Record<string, string>;
  /** The body's length in bytes. */
  bodyLength: number;
  /** Stored messages carried by the body (pull results, view/query results, CONSUME_MESSAGE_DIRECTLY...). */
  messages?: MessageDescription[];
  /** A JSON body (fastjson dialect), parsed. */
  json?: unknown;
  /** Any other body. */
  bodyBase64?: string;
  /** Why the body could not be decoded as what it claimed to be (it is then given as bodyBase64). */
  bodyError?: string;
}

/** Responses whose successful body is a run of stored messages (docs/protocol-facts.md#stored-record). */
const MESSAGE_RESPONSES = new Set<number>([
  RequestCode.PULL_MESSAGE,
  RequestCode.LITE_PULL_MESSAGE,
  RequestCode.VIEW_MESSAGE_BY_ID,
  RequestCode.QUERY_MESSAGE,
  RequestCode.POP_MESSAGE,
  RequestCode.PEEK_MESSAGE,
]);
/** Broker-to-client requests whose body is one stored message. */
const MESSAGE_REQUESTS = new Set<number>([RequestCode.CONSUME_MESSAGE_DIRECTLY, RequestCode.CHECK_TRANSACTION_STATE]);

/** Does the body start like a stored message record? */
function looksLikeMessages(body: Buffer): boolean {
  if (body.length < 8) return false;
  const magic = body.readInt32BE(4);
  return (magic === MESSAGE_MAGIC_CODE_V1 || magic === MESSAGE_MAGIC_CODE_V2) && body.readInt32BE(0) <= body.length;
}

function startsLikeJson(body: Buffer): boolean {
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  return body[i] === 0x7b || body[i] === 0x5b; // { or [
}

export function describeMessage(m: MessageExt, withBody = true): MessageDescription {
  const d: MessageDescription = {
    topic: m.topic,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    commitLogOffset: m.commitLogOffset,
    sysFlag: m.sysFlag,
    bornTimestamp: m.bornTimestamp,
    bornHost: m.bornHost,
    storeTimestamp: m.storeTimestamp,
    storeHost: m.storeHost,
    reconsumeTimes: m.reconsumeTimes,
    properties: m.properties,
    msgId: m.msgId,
    offsetMsgId: m.offsetMsgId,
  };
  if (withBody) d.bodyBase64 = m.body.toString('base64');
  else d.bodyLength = m.body.length;
  return d;
}

/** Does this frame's body hold stored messages? `requestCode` is the paired request's, for responses. */
export function carriesMessages(cmd: RemotingCommand, requestCode: number | undefined): boolean {
  const body = cmd.body;
  if (!body || body.length === 0) return false;
  if (isResponse(cmd)) {
    if (cmd.code !== ResponseCode.SUCCESS) return false;
    if (requestCode !== undefined) return MESSAGE_RESPONSES.has(requestCode) && looksLikeMessages(body);
    return looksLikeMessages(body); // unpaired (capture started after the request): recognise the records
  }
  return MESSAGE_REQUESTS.has(cmd.code) && looksLikeMessages(body);
}

function decodeMessagesTolerant(body: Buffer): MessageExt[] {
  try {
    return decodeMessages(body);
  } catch (err) {
    // A body compressed with a codec we cannot inflate still has readable metadata.
    if (err instanceof UnsupportedCompressionError) return decodeMessages(body, { decompress: false });
    throw err;
  }
}

/**
 * Where a frame was seen and what it answers; all optional (raw frame files have no addresses).
 * @category Capture
 */
export interface FrameContext {
  /** Capture time, in seconds since the epoch. */
  ts?: number | undefined;
  /** Address ("ip:port") that sent the frame. */
  src?: string | undefined;
  /** Address ("ip:port") the frame went to. */
  dst?: string | undefined;
  /** For a response: the code of the request with the same opaque on the same connection. */
  requestCode?: number | undefined;
  /** For a response: the time since its request, in milliseconds (rounded to microseconds). */
  latencyMs?: number | undefined;
}

/**
 * The context of a frame the capture decoder found: its time and addresses, and for a response the
 * request it answers and the latency since it (microsecond-rounded milliseconds).
 * @category Capture
 */
export function frameContext(f: DecodedFrame): FrameContext {
  const req = f.request;
  return {
    ts: f.ts ?? undefined,
    src: f.src ?? undefined,
    dst: f.dst ?? undefined,
    requestCode: req?.code,
    latencyMs: req && req.ts !== null && f.ts !== null ? Math.round((f.ts - req.ts) * 1e6) / 1e3 : undefined,
  };
}

/**
 * Options of describeCommand.
 * @category Capture
 */
export interface DescribeOptions {
  /**
   * Give message bodies as base64. A readable table does not show them, and skips the
   * encoding: each message then gets bodyLength instead.
   * @default true
   */
  messageBodies?: boolean;
}

/**
 * Turn a decoded frame into the object the decoder prints (keys in a fixed, readable order).
 * @category Capture
 */
export function describeCommand(
  cmd: RemotingCommand,
  ctx: FrameContext = {},
  options: DescribeOptions = {},
): FrameDescription {
  const d = describeHeader(cmd, ctx);
  const body = cmd.body;
  if (!body || body.length === 0) return d;
  if (carriesMessages(cmd, d.kind === 'response' ? ctx.requestCode : undefined)) {
    try {
      const withBody = options.messageBodies ?? true;
      d.messages = decodeMessagesTolerant(body).map((m) => describeMessage(m, withBody));
      return d;
    } catch (err) {
      d.bodyError = (err as Error).message;
    }
  } else if (startsLikeJson(body)) {
    try {
      // The fastjson dialect (unquoted numeric keys, object keys) that name servers and brokers write.
      d.json = parseFastjson(body.toString('utf8'));
      return d;
    } catch {
      // not JSON after all: given as base64 below
    }
  }
  d.bodyBase64 = body.toString('base64');
  return d;
}

/**
 * The description of a frame up to `bodyLength`, without what its body holds: what
 * describeCommand returns for a frame without a body, and the head of any other.
 */
export function describeHeader(cmd: RemotingCommand, ctx: FrameContext = {}): FrameDescription {
  const response = isResponse(cmd);
  const body = cmd.body;
  const d = {} as FrameDescription;
  if (ctx.ts !== undefined) d.ts = ctx.ts;
  if (ctx.src !== undefined) d.src = ctx.src;
  if (ctx.dst !== undefined) d.dst = ctx.dst;
  d.kind = response ? 'response' : 'request';
  d.code = cmd.code;
  d.name = response ? responseCodeName(cmd.code) : requestCodeName(cmd.code);
  if (response && ctx.requestCode !== undefined) {
    d.requestCode = ctx.requestCode;
    if (ctx.latencyMs !== undefined) d.latencyMs = ctx.latencyMs;
  }
  d.opaque = cmd.opaque;
  d.flag = cmd.flag;
  d.oneway = isOneway(cmd);
  d.language = cmd.language;
  d.version = cmd.version;
  d.serializeType = cmd.serializeType;
  d.remark = cmd.remark;
  d.extFields = cmd.extFields ?? {};
  d.bodyLength = body ? body.length : 0;
  return d;
}

/**
 * The stored messages of a frame whose body holds them (carriesMessages), or null: no such body,
 * or one that does not decode (describeCommand then gives the reason as bodyError).
 */
export function frameMessages(cmd: RemotingCommand, ctx: FrameContext = {}): MessageExt[] | null {
  if (!cmd.body || cmd.body.length === 0 || !carriesMessages(cmd, isResponse(cmd) ? ctx.requestCode : undefined))
    return null;
  try {
    return decodeMessagesTolerant(cmd.body);
  } catch {
    return null;
  }
}
