import createDebug from '../debug.js';
import { Operations } from '../../protocol/internal.js';
import type { Clock } from '../clock.js';
import type { RemotingClient } from '../remoting/index.js';
import type { ClientApiContext } from './mq-client-api.js';
import { call } from './operation-call.js';

const log = createDebug('rocketwire:client');

/** What one heartbeat needs of the client instance, and where it records the broker's answer. */
export interface HeartbeatHost {
  readonly remoting: RemotingClient;
  readonly options: { readonly clock: Clock };
  /** Broker address → the `version` its last heartbeat answer carried. */
  readonly brokerVersionTable: Map<string, number>;
  /** Broker address → clock time of its last answered heartbeat (health()). */
  readonly lastHeartbeatAnswer: Map<string, number>;
}

/**
 * One HEART_BEAT to `addr` with the HeartbeatData body already encoded (one body for every broker
 * of a round); the error, or null when the broker took it.
 */
export async function sendHeartbeatTo(
  host: HeartbeatHost,
  ctx: ClientApiContext,
  addr: string,
  body: Buffer | null,
): Promise<Error | null> {
  try {
    const reply = await call(host.remoting, ctx, addr, Operations.HEART_BEAT, {}, undefined, {
      timeoutMs: ctx.apiTimeoutMs,
      encodedBody: body,
    });
    host.brokerVersionTable.set(addr, reply.version);
    host.lastHeartbeatAnswer.set(addr, host.options.clock.now());
    return null;
  } catch (err) {
    log('heartbeat to %s failed: %s', addr, (err as Error).message);
    return err as Error;
  }
}
