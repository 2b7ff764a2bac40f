import type { MQClientInstance } from './mq-client-instance.js';

/**
 * One broker address the client instance heartbeats, in health().
 * @category Shared by every client
 */
export interface BrokerHealth {
  /** The broker's address ("host:port"). */
  addr: string;
  /** Epoch milliseconds (the consumer's clock) of its last answered heartbeat; null if none yet. */
  lastHeartbeatAtMs: number | null;
}

/**
 * The name-server side of health().
 * @category Shared by every client
 */
export interface NameServerHealth {
  /** The address that answered last, and when (epoch ms); null when none has answered yet. */
  lastAnswer: { addr: string; atMs: number } | null;
}

/** The name-server and broker parts of health(), shared by every client of an instance. */
export function instanceHealth(instance: MQClientInstance | null): {
  nameServer: NameServerHealth;
  brokers: BrokerHealth[];
} {
  if (!instance) return { nameServer: { lastAnswer: null }, brokers: [] };
  const brokers: BrokerHealth[] = [];
  for (const addr of instance.knownBrokerAddrs())
    brokers.push({ addr, lastHeartbeatAtMs: instance.lastHeartbeatAnswer.get(addr) ?? null });
  const last = instance.lastNameServerAnswer;
  return { nameServer: { lastAnswer: last ? { ...last } : null }, brokers };
}
