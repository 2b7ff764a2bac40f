import createDebug from 'debug';
import {
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  CLIENT_INNER_PRODUCER_GROUP,
  encodeProperties,
  Operations,
  retryTopic,
} from '../../protocol/index.js';
import { topicRouteToPublishQueues } from '../client/index.js';
import { BrokerAddressNotFoundError, NoRetryQueueError } from './errors.js';
import type { MessageExt } from './message.js';
import type { PushConsumerImpl } from './push-consumer-impl.js';

const log = createDebug('rocketwire:consumer');

const SEND_MSG_BACK_TIMEOUT_MS = 5000;

// Failed messages back to the broker (§9.8, §9.11): CONSUMER_SEND_MSG_BACK, else the internal producer.

/**
 * Concurrent path (§9.8): CONSUMER_SEND_MSG_BACK to the master of the queue's broker, falling back to
 * republishing to the retry topic. Resolves true when one of them stored the message.
 */
export async function sendMessageBack(impl: PushConsumerImpl, msg: MessageExt, delayLevel: number, brokerName: string): Promise<boolean> {
  const instance = impl.instance;
  if (!instance) return false;
  try {
    const addr = impl.masterAddress(brokerName);
    if (!addr) throw new BrokerAddressNotFoundError(brokerName);
    await instance.consumerSendMessageBack(
      addr,
      {
        group: impl.config.consumerGroup,
        commitLogOffset: msg.commitLogOffset,
        delayLevel,
        originMsgId: msg.msgId,
        originTopic: msg.topic,
        maxReconsumeTimes: impl.maxReconsumeTimes,
        brokerName,
      },
      SEND_MSG_BACK_TIMEOUT_MS,
    );
    impl.recorder.sendBackOk++;
    return true;
  } catch (err) {
    impl.recorder.sendBackFailed++;
    log('CONSUMER_SEND_MSG_BACK of %s failed (%s); republishing to the retry topic', msg.msgId, (err as Error).message);
    return republishToRetry(impl, msg, msg.reconsumeTimes + 1);
  }
}

/**
 * The internal producer path (CLIENT_INNER_PRODUCER): SEND_MESSAGE_V2 of a copy to %RETRY%group with
 * RETRY_TOPIC, ORIGIN_MESSAGE_ID, delay level 3 + reconsumeTimes, and RECONSUME_TIME/MAX_RECONSUME_TIMES
 * moved into header fields j/l (a value ≥ max makes the broker store it in the DLQ).
 */
export async function republishToRetry(impl: PushConsumerImpl, msg: MessageExt, reconsumeTime: number): Promise<boolean> {
  const instance = impl.instance;
  if (!instance) return false;
  const topic = retryTopic(impl.config.consumerGroup);
  try {
    const route = await instance.getTopicRoute(topic);
    const queues = topicRouteToPublishQueues(topic, route);
    if (queues.length === 0) throw new NoRetryQueueError(topic);
    const q = queues[impl.publishIndex++ % queues.length]!;
    const addr = impl.masterAddress(q.brokerName);
    if (!addr) throw new BrokerAddressNotFoundError(q.brokerName);
    const props: Record<string, string> = { ...msg.properties };
    // Consumer-side bookkeeping does not travel with the copy.
    delete props.CONSUME_START_TIME;
    delete props.MIN_OFFSET;
    delete props.MAX_OFFSET;
    delete props.TRAN_MSG;
    delete props.RECONSUME_TIME;
    delete props.MAX_RECONSUME_TIMES;
    props.RETRY_TOPIC = msg.topic;
    props.ORIGIN_MESSAGE_ID = props.ORIGIN_MESSAGE_ID || msg.msgId;
    props.DELAY = String(3 + msg.reconsumeTimes);
    await instance.invoke(
      addr,
      Operations.SEND_MESSAGE_V2,
      {
        producerGroup: CLIENT_INNER_PRODUCER_GROUP,
        topic,
        defaultTopic: AUTO_CREATE_TOPIC_KEY_TOPIC,
        defaultTopicQueueNums: 4,
        queueId: q.queueId,
        sysFlag: 0,
        bornTimestamp: impl.config.clock.now(),
        flag: msg.flag ?? 0,
        properties: encodeProperties(props),
        reconsumeTimes: reconsumeTime,
        unitMode: false,
        maxReconsumeTimes: impl.maxReconsumeTimes,
        batch: false,
        bname: q.brokerName,
      },
      msg.body,
      { timeoutMs: SEND_MSG_BACK_TIMEOUT_MS },
    );
    impl.recorder.republished++;
    return true;
  } catch (err) {
    log('republishing %s to %s failed: %s', msg.msgId, topic, (err as Error).message);
    return false;
  }
}

