import createDebug from '../../debug.js';
import {
  encodeConsumerRunningInfo,
  messageQueue,
  queueKey,
  retryTopic,
  type CMResultName,
  type ConsumeMessageDirectlyResult,
  type MessageQueue,
} from '../../../protocol/internal.js';
import { sleep } from '../../clock.js';
import { resetRetryTopic } from '../core/consume-host.js';
import { JAVA_INT_MAX } from './consume-message-concurrently-service.js';
import {
  ConsumeConcurrentlyStatus,
  ConsumeOrderlyStatus,
  isThenable,
  type MessageListenerConcurrently,
  type MessageListenerOrderly,
} from '../core/consume-types.js';
import type { MessageExt } from '../core/message.js';
import type { PushHost } from './push-host.js';
import { processQueueInfo, subscriptionInfo } from '../core/running-info.js';

const log = createDebug('rocketwire:consumer');

// Requests a broker relays from mqadmin to this consumer (docs/protocol-facts.md#broker-initiated-requests).

/** GET_CONSUMER_RUNNING_INFO: the ConsumerRunningInfo body Java's mqadmin consumerStatus reads. */
export function runningInfo(
  impl: Pick<
    PushHost,
    'config' | 'startTimestamp' | 'limits' | 'rebalance' | 'running' | 'subscriptionInner' | 'recorder'
  >,
): Buffer {
  const { config } = impl;
  const props: Record<string, string> = {
    PROP_CLIENT_VERSION: 'V4_9_8',
    PROP_CONSUMEORDERLY: String(config.orderly),
    PROP_CONSUMER_START_TIMESTAMP: String(impl.startTimestamp),
    PROP_CONSUME_TYPE: 'CONSUME_PASSIVELY',
    PROP_NAMESERVER_ADDR: config.namesrvAddr,
    PROP_THREADPOOL_CORE_SIZE: String(config.consumeThreadMin),
    adjustThreadPoolNumsThreshold: '100000',
    allocateMessageQueueStrategy: config.allocateStrategy.name,
    awaitTerminationMillisWhenShutdown: String(config.awaitTerminationMillisWhenShutdown),
    consumeConcurrentlyMaxSpan: String(config.consumeConcurrentlyMaxSpan),
    consumeFromWhere: config.consumeFromWhere,
    consumeMessageBatchMaxSize: String(config.consumeMessageBatchMaxSize),
    consumeThreadMax: String(config.consumeThreadMax),
    consumeThreadMin: String(config.consumeThreadMin),
    consumeTimeout: String(Math.max(1, Math.round(config.consumeTimeoutMs / 60_000))),
    consumerGroup: config.consumerGroup,
    maxReconsumeTimes: String(config.maxReconsumeTimes),
    messageModel: config.messageModel,
    pullBatchSize: String(config.pullBatchSize),
    pullInterval: String(config.pullIntervalMs),
    pullThresholdForQueue: String(impl.limits.pullThresholdForQueue),
    pullThresholdForTopic: String(config.pullThresholdForTopic),
    pullThresholdSizeForQueue: String(impl.limits.pullThresholdSizeForQueueMiB),
    pullThresholdSizeForTopic: String(config.pullThresholdSizeForTopicMiB),
    suspendCurrentQueueTimeMillis: String(config.suspendCurrentQueueTimeMillis),
  };
  const mqTable: [MessageQueue, Record<string, unknown>][] = [];
  for (const { mq, pq } of impl.rebalance.processQueueTable.values())
    mqTable.push([mq, processQueueInfo(pq, impl.running?.offsetStore.readMemory(mq) ?? -1)]);
  const statusTable: Record<string, Record<string, unknown>> = {};
  for (const topic of impl.subscriptionInner.keys())
    statusTable[topic] = { ...impl.recorder.manager.consumeStatus(topic) };
  const subscriptionSet = [...impl.subscriptionInner.values()].map(subscriptionInfo);
  // Java's mqTable and statusTable are TreeMaps; the codec writes keys sorted, MessageQueue keys as objects.
  return encodeConsumerRunningInfo({ jstack: '', mqTable, properties: props, statusTable, subscriptionSet });
}

/** CONSUME_MESSAGE_DIRECTLY: one message straight to the handler, outside the process queues. */
export async function consumeMessageDirectly(
  impl: Pick<PushHost, 'config' | 'listener'>,
  msg: MessageExt,
  brokerName: string,
): Promise<ConsumeMessageDirectlyResult> {
  msg.brokerName = brokerName;
  const mq = messageQueue(msg.topic, brokerName, msg.queueId);
  resetRetryTopic([msg], retryTopic(impl.config.consumerGroup));
  const begin = impl.config.clock.now();
  let consumeResult: CMResultName;
  let remark = '';
  try {
    let r: unknown;
    if (impl.config.orderly) {
      r = (impl.listener as MessageListenerOrderly)([msg], {
        messageQueue: mq,
        autoCommit: true,
        suspendCurrentQueueTimeMs: -1,
        suspendCurrentQueueTimeMillis: -1,
      });
    } else {
      r = (impl.listener as MessageListenerConcurrently)([msg], {
        messageQueue: mq,
        delayLevelWhenNextConsume: 0,
        ackIndex: JAVA_INT_MAX,
      });
    }
    if (isThenable(r)) r = await r;
    // the handler rule (consume-types.ts): nothing is success; Java says CR_RETURN_NULL for a null
    if (
      r === undefined ||
      r === null ||
      r === ConsumeConcurrentlyStatus.CONSUME_SUCCESS ||
      r === ConsumeOrderlyStatus.SUCCESS
    )
      consumeResult = 'CR_SUCCESS';
    else if (
      r === ConsumeConcurrentlyStatus.RECONSUME_LATER ||
      r === ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
    )
      consumeResult = 'CR_LATER';
    else if (r === ConsumeOrderlyStatus.COMMIT) consumeResult = 'CR_COMMIT';
    else if (r === ConsumeOrderlyStatus.ROLLBACK) consumeResult = 'CR_ROLLBACK';
    else consumeResult = 'CR_RETURN_NULL';
  } catch (err) {
    consumeResult = 'CR_THROW_EXCEPTION';
    remark = (err as Error)?.stack ?? String(err);
  }
  return {
    autoCommit: true,
    consumeResult,
    order: impl.config.orderly,
    remark,
    spentTimeMills: impl.config.clock.now() - begin,
  };
}

/** How long a reset lets handler calls already running on the dropped queues finish (Java sleeps 10 s). */
export const RESET_OFFSET_SETTLE_MS = 10_000;

/**
 * RESET_CONSUMER_CLIENT_OFFSET, as Java's MQClientInstance.resetOffset: suspend the consumer (no pull,
 * no periodic rebalance), drop and clear the held queues named in `offsets`, let the handler calls in
 * flight on them settle for 10 s (their results no longer count), then store each new offset, persist
 * it and remove the queue, and resume, which rebalances and re-creates the queues from the new offsets.
 */
export async function resetOffset(
  impl: Pick<PushHost, 'state' | 'suspend' | 'resume' | 'rebalance' | 'config' | 'pullService' | 'offsetStore'>,
  topic: string,
  offsets: Map<string, number>,
): Promise<void> {
  if (impl.state !== 'RUNNING') return;
  impl.suspend();
  try {
    for (const { mq, pq } of impl.rebalance.processQueueTable.values()) {
      if (mq.topic !== topic || !offsets.has(queueKey(mq))) continue;
      impl.rebalance.dropProcessQueue(pq);
      pq.clear();
    }
    await sleep(impl.config.clock, RESET_OFFSET_SETTLE_MS, impl.pullService.signal);
    if (impl.state !== 'RUNNING') return;
    let n = 0;
    for (const { mq } of [...impl.rebalance.processQueueTable.values()]) {
      const offset = offsets.get(queueKey(mq));
      if (mq.topic !== topic || offset === undefined) continue;
      impl.offsetStore.updateOffset(mq, offset, false);
      await impl.rebalance.removeProcessQueue(mq);
      n++;
    }
    log('reset %d offsets of %s', n, topic);
  } finally {
    impl.resume();
  }
}
