import { MQClientInstance, resolveInstanceName, type ConsumerInner } from '../client/index.js';
import type { PushConsumerConfig } from './options.js';

/**
 * The client instance a consumer runs on (Java's MQClientManager.getOrCreateMQClientInstance),
 * with the consumer registered under its group: CLUSTERING consumers share the instance of their
 * instanceName (the pid by default), BROADCASTING ones get "DEFAULT" unless named. When the group
 * cannot be registered (the same group twice on one instance) the instance is released and the
 * error thrown. Used by the push and the lite pull consumer.
 */
export async function acquireConsumerInstance(config: PushConsumerConfig, consumer: ConsumerInner): Promise<MQClientInstance> {
  const instanceName = config.messageModel === 'CLUSTERING' ? resolveInstanceName(config.instanceName) : (config.instanceName ?? 'DEFAULT');
  const instance = MQClientInstance.acquire({
    namesrvAddr: config.namesrvAddr,
    instanceName,
    ...(config.clientIp !== undefined ? { clientIp: config.clientIp } : {}),
    ...(config.serializeType !== undefined ? { serializeType: config.serializeType } : {}),
    ...(config.acl !== undefined ? { acl: config.acl } : {}),
    ...(config.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: config.heartbeatIntervalMs } : {}),
    ...(config.pollNameServerIntervalMs !== undefined ? { pollNameServerIntervalMs: config.pollNameServerIntervalMs } : {}),
    ...(config.mqClientApiTimeoutMs !== undefined ? { mqClientApiTimeoutMs: config.mqClientApiTimeoutMs } : {}),
    persistOffsetIntervalMs: config.persistOffsetIntervalMs,
    clock: config.clock,
  });
  try {
    instance.registerConsumer(config.consumerGroup, consumer);
  } catch (err) {
    await instance.release();
    throw err;
  }
  return instance;
}
