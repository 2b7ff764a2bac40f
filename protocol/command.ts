import { MQVersion, RemotingFlag, type SerializeTypeName } from './codes.js';

/**
 * One remoting frame, request or response (RemotingCommand in Java).
 * `extFields` values are always strings on the wire; `body` is a view that may point into a larger
 * receive buffer, so copy it if you keep it beyond the life of the frame and mutate the source.
 */
export interface RemotingCommand {
  code: number;
  /** LanguageCode name, e.g. "JAVA"; null when the peer sent a code we do not know. */
  language: string | null;
  version: number;
  opaque: number;
  flag: number;
  remark: string | null;
  extFields: Record<string, string> | null;
  body: Buffer | null;
  /** Serialize type of the header as received or as it will be sent. */
  serializeType: SerializeTypeName;
}

/** Whether the frame is a response: bit 0 (RemotingFlag.RESPONSE) of its `flag`. */
export function isResponse(cmd: Pick<RemotingCommand, 'flag'>): boolean {
  return (cmd.flag & RemotingFlag.RESPONSE) !== 0;
}
/** Whether the frame is a request that wants no response: bit 1 (RemotingFlag.ONEWAY) of its `flag`. */
export function isOneway(cmd: Pick<RemotingCommand, 'flag'>): boolean {
  return (cmd.flag & RemotingFlag.ONEWAY) !== 0;
}

/**
 * The optional parts of a frame for createRequest and createResponse. Left out, they take those
 * functions' defaults (opaque 0, language JAVA, version 409, no remark, extFields or body); a
 * response takes its opaque from the request and ignores `opaque` and `oneway`.
 */
export interface CommandInit {
  opaque?: number;
  language?: string | null;
  version?: number;
  remark?: string | null;
  extFields?: Record<string, string> | null;
  body?: Buffer | null;
  serializeType?: SerializeTypeName;
  oneway?: boolean;
}

/** A request frame. Defaults: language JAVA, version 409 (V4_9_8), JSON header. */
export function createRequest(code: number, init: CommandInit = {}): RemotingCommand {
  return {
    code,
    language: init.language === undefined ? 'JAVA' : init.language,
    version: init.version ?? MQVersion.V4_9_8,
    opaque: init.opaque ?? 0,
    flag: init.oneway ? RemotingFlag.ONEWAY : 0,
    remark: init.remark ?? null,
    extFields: init.extFields === undefined ? null : init.extFields,
    body: init.body ?? null,
    serializeType: init.serializeType ?? 'JSON',
  };
}

/** A response to `request`: same opaque, flag bit 0 set, in the request's serialize type unless given. */
export function createResponse(
  request: Pick<RemotingCommand, 'opaque' | 'serializeType'>,
  code: number,
  init: CommandInit = {},
): RemotingCommand {
  return {
    code,
    language: init.language === undefined ? 'JAVA' : init.language,
    version: init.version ?? MQVersion.V4_9_8,
    opaque: request.opaque,
    flag: RemotingFlag.RESPONSE,
    remark: init.remark ?? null,
    extFields: init.extFields === undefined ? null : init.extFields,
    body: init.body ?? null,
    serializeType: init.serializeType ?? request.serializeType,
  };
}
