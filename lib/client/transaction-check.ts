import createDebug from '../debug.js';
import {
  decodeMessages,
  decodeOperationRequest,
  Operations,
  type CheckTransactionStateRequestHeader,
  type MessageExt,
  type RemotingCommand,
} from '../../protocol/internal.js';

const log = createDebug('rocketwire:client');

/**
 * A transaction producer's answer to a broker's CHECK_TRANSACTION_STATE: `brokerAddr` is where the
 * check came from (the END_TRANSACTION goes back there), `msg` the half message as the producer
 * sent it (real topic and queue), `header` the check's fields (offsets of the copy that is checked).
 */
export type TransactionCheckHandler = (
  brokerAddr: string,
  msg: MessageExt,
  header: CheckTransactionStateRequestHeader,
) => void;

/**
 * ClientRemotingProcessor#checkTransactionState: decode the message of the body, pick the
 * producer by its PGROUP property and hand the check over; nothing is answered (the request is
 * oneway; the producer later sends END_TRANSACTION). A body that does not decode, or a group this
 * process does not produce for, is logged and dropped, as Java does.
 */
export function serveCheckTransactionState(
  req: RemotingCommand,
  brokerAddr: string,
  handlers: ReadonlyMap<string, TransactionCheckHandler>,
): null {
  const { header, body } = decodeOperationRequest(Operations.CHECK_TRANSACTION_STATE, req);
  return checkTransactionState(header, body, brokerAddr, handlers);
}

/** serveCheckTransactionState with the request decoded by its row (header, raw body). */
export function checkTransactionState(
  header: CheckTransactionStateRequestHeader,
  body: Buffer | null,
  brokerAddr: string,
  handlers: ReadonlyMap<string, TransactionCheckHandler>,
): null {
  let msg: MessageExt | undefined;
  try {
    msg = body && body.length > 0 ? decodeMessages(body)[0] : undefined;
  } catch (err) {
    log('CHECK_TRANSACTION_STATE from %s: body does not decode: %s', brokerAddr, (err as Error).message);
    return null;
  }
  if (!msg) {
    log('CHECK_TRANSACTION_STATE from %s: no message in the body', brokerAddr);
    return null;
  }
  const group = msg.properties.PGROUP;
  const handler = group === undefined ? undefined : handlers.get(group);
  if (!handler) {
    log('CHECK_TRANSACTION_STATE from %s: no transaction producer of group %s here', brokerAddr, group);
    return null;
  }
  handler(brokerAddr, msg, header);
  return null;
}
