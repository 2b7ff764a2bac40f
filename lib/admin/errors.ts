import { OptionError, ResponseCode, RocketwireError } from '../../protocol/index.js';
import { BrokerError } from '../remoting/index.js';

/** A topic neither the name server nor any broker knows. */
export class UnknownTopicError extends RocketwireError {
  override readonly name = 'UnknownTopicError';
  override readonly errorCode = 'ERR_UNKNOWN_TOPIC';
  constructor(
    readonly topic: string,
    options?: { cause?: unknown },
  ) {
    super(`unknown topic ${topic}`, options);
  }
}

/** A consumer group no broker knows (no retry-topic route, no config, no live client). */
export class UnknownGroupError extends RocketwireError {
  override readonly name = 'UnknownGroupError';
  override readonly errorCode = 'ERR_UNKNOWN_GROUP';
  constructor(
    readonly group: string,
    readonly detail?: string,
    options?: { cause?: unknown },
  ) {
    super(`unknown consumer group ${group}${detail ? ` (${detail})` : ''}`, options);
  }
}

/** A message id, key or offset that finds nothing. */
export class MessageNotFoundError extends RocketwireError {
  override readonly name = 'MessageNotFoundError';
  override readonly errorCode = 'ERR_MESSAGE_NOT_FOUND';
  constructor(readonly what: string) {
    super(`no message found for ${what}`);
  }
}

/**
 * A write the broker (or name server) refused because the caller may not do it: NO_PERMISSION,
 * which an ACL-enabled broker answers for an account without the right (and a broker for a topic
 * whose perm forbids it).
 */
export class AdminPermissionError extends RocketwireError {
  override readonly name = 'AdminPermissionError';
  override readonly errorCode = 'ERR_ADMIN_PERMISSION';
  constructor(
    readonly operation: string,
    readonly addr: string,
    readonly remark: string | null,
    options?: { cause?: unknown },
  ) {
    super(`${operation} refused by ${addr}: NO_PERMISSION${remark ? `: ${remark}` : ''}`, options);
  }
}

/** A cluster name the name server does not list. */
export class UnknownClusterError extends RocketwireError {
  override readonly name = 'UnknownClusterError';
  override readonly errorCode = 'ERR_UNKNOWN_CLUSTER';
  constructor(readonly clusterName: string) {
    super(`unknown cluster ${clusterName}`);
  }
}

/** A producer group no broker of the topic has a producer of online (`producerConnection`). */
export class UnknownProducerGroupError extends RocketwireError {
  override readonly name = 'UnknownProducerGroupError';
  override readonly errorCode = 'ERR_UNKNOWN_PRODUCER_GROUP';
  constructor(
    readonly group: string,
    options?: { cause?: unknown },
  ) {
    super(`no producer of group ${group} is online`, options);
  }
}

/** An argument of an admin method out of range or naming nothing it can act on; `option` names it. */
export class AdminArgumentError extends OptionError {
  override readonly name = 'AdminArgumentError';
  override readonly errorCode = 'ERR_ADMIN_ARGUMENT';
  constructor(option: string, message: string) {
    super(option, `${option}: ${message}`);
  }
}

/** NO_PERMISSION as AdminPermissionError naming the operation and the peer; anything else as it is. */
export function permissionError(err: unknown, operation: string, addr: string): unknown {
  if (err instanceof BrokerError && err.code === ResponseCode.NO_PERMISSION)
    return new AdminPermissionError(operation, addr, err.remark, { cause: err });
  return err;
}

/**
 * A static topic (RIP-21) update that cannot be made: no target broker, a mapping the brokers
 * disagree on, a normal topic of that name, fewer logic queues than the topic has.
 */
export class StaticTopicError extends RocketwireError {
  override readonly name = 'StaticTopicError';
  override readonly errorCode = 'ERR_STATIC_TOPIC';
  constructor(
    readonly topic: string,
    readonly reason: string,
  ) {
    super(`static topic ${topic}: ${reason}`);
  }
}
