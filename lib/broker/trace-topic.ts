import { PermName } from '../../protocol/index.js';
import type { TopicConfigManager } from './topic-config.js';

/** BrokerConfig.regionId's default, which every send answer and stored message carries as MSG_REGION. */
export const DEFAULT_REGION_ID = 'DefaultRegion';
/** BrokerConfig.msgTraceTopicName's default. */
export const DEFAULT_MSG_TRACE_TOPIC = 'RMQ_SYS_TRACE_TOPIC';

/**
 * AbstractSendMessageProcessor#buildMsgContext puts MSG_REGION and TRACE_ON into the properties of
 * every message it stores (a batch's too): a consumer with trace on skips a message whose
 * TRACE_ON is "false" and drops the records of one without MSG_REGION.
 */
export function stampTraceProperties(properties: Record<string, string>): void {
  properties.MSG_REGION = DEFAULT_REGION_ID;
  properties.TRACE_ON = 'true';
}

/** traceTopicEnable: TopicConfigManager creates the trace topic with one read and one write queue. */
export function ensureTraceTopic(
  topics: TopicConfigManager,
  options: { traceTopicEnable?: boolean | undefined; msgTraceTopicName?: string | undefined },
): void {
  if (options.traceTopicEnable !== true) return;
  topics.ensure(options.msgTraceTopicName ?? DEFAULT_MSG_TRACE_TOPIC, 1, PermName.PERM_READ | PermName.PERM_WRITE);
}
