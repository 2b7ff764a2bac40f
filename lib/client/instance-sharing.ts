import type { ResolvedClientOptions } from './client-options.js';
import { ClientOptionError } from './errors.js';

/** Options every client of one shared instance must agree on (its one RemotingClient uses them). */
const SHARED_CONNECTION_OPTIONS = [
  'serializeType',
  'connectTimeoutMs',
  'tls',
  'acl',
  'language',
  'version',
  'maxUnmatchedResponses',
  'useHeartbeatV2',
] as const;

function sameOption(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // acl credentials and tls options given as equal literals by two clients are the same options
  if (a && b && typeof a === 'object' && typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

/**
 * Refuses a client whose options differ from those of the shared instance it would join in a way
 * the instance cannot honour: the clock, the connection side and namespaceV2 would silently be the
 * first client's.
 */
export function checkSharedOptions(
  resolved: ResolvedClientOptions,
  shared: ResolvedClientOptions,
  clientId: string,
): void {
  if (resolved.clock !== shared.clock) {
    // The shared instance's clock drives heartbeats, flushes and call timeouts of every user of
    // it: a second clock would be silently ignored.
    throw new ClientOptionError(
      'clock',
      `differs from the clock of client instance ${clientId} (give this client another instanceName)`,
    );
  }
  for (const option of SHARED_CONNECTION_OPTIONS) {
    if (!sameOption(resolved[option], shared[option])) {
      throw new ClientOptionError(
        option,
        `differs from the ${option} of client instance ${clientId}, which another client already uses (give this client another instanceName)`,
      );
    }
  }
  if (resolved.namespaceV2 !== shared.namespaceV2) {
    // stamped on every request of the shared instance, as Java's NamespaceRpcHook on its MQClientAPIImpl
    throw new ClientOptionError(
      'namespaceV2',
      `differs from the namespaceV2 of client instance ${clientId} (give this client another instanceName)`,
    );
  }
}
