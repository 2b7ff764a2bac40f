import { SendMessageRequestHeader, SendMessageRequestHeaderV2 } from './custom-header/send-message.js';
import type { Operation } from './operation.js';
import { AdminOperations } from './operations/admin.js';
import { AdminOpsOperations } from './operations/admin-ops.js';
import { ClientOperations } from './operations/clients.js';
import { MessagingOperations } from './operations/messaging.js';
import { StaticTopicOperations } from './operations/static-topic.js';
import { BrokerStatsOperations } from './operations/broker-stats.js';

export {
  EmptyHeader,
  type AnyOperation,
  type BodyCodec,
  type BodySpec,
  type Operation,
  type OperationAnswerCode,
  type OperationRequest,
  type OperationRequestBody,
  type OperationResponse,
  type OperationResponseBody,
  type ResponseCodeValue,
} from './operation.js';

/**
 * The operation table: for every request code rocketwire sends or serves, the codec of its
 * request header, of its response header and of both bodies (operation.ts describes a row). The
 * rows live by concern in operations/: the data path (messaging.ts), client management and the
 * broker's requests to clients (clients.ts), name server and admin (admin.ts). A new request code
 * is one row there plus the code that uses it.
 */

/** Every operation, by RequestCode name. */
export const Operations = {
  ...MessagingOperations,
  ...ClientOperations,
  ...AdminOperations,
  ...StaticTopicOperations,
  ...AdminOpsOperations,
  ...BrokerStatsOperations,
} as const;

/** The name of a row of Operations: the RequestCode name of its request code. */
export type OperationName = keyof typeof Operations;

const BY_CODE: ReadonlyMap<number, Operation> = new Map(
  Object.values(Operations).map((o) => [o.code, o as unknown as Operation] as const),
);

/** The operation of a request code, or undefined for a code not in the table. */
export function operationOf(code: number): Operation | undefined {
  return BY_CODE.get(code);
}

/**
 * Decode a send request header by request code, with the codec of the code's row: V2 (one-letter
 * keys) for SEND_MESSAGE_V2, SEND_BATCH_MESSAGE and SEND_REPLY_MESSAGE_V2, V1 for any other code.
 */
export function decodeSendMessageRequestHeader(
  code: number,
  ext: Readonly<Record<string, string>> | null | undefined,
): SendMessageRequestHeader {
  return (
    operationOf(code)?.request === SendMessageRequestHeaderV2 ? SendMessageRequestHeaderV2 : SendMessageRequestHeader
  ).decode(ext);
}
