import createDebug from '../../debug.js';
import {
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  CLIENT_INNER_PRODUCER_GROUP,
  encodeProperties,
  isLogicQueueBroker,
  MessageSysFlag,
  Operations,
  retryTopic,
  type MessageQueue,
} from '../../../protocol/index.js';
import { topicRouteToPublishQueues } from '../../client/index.js';
import { BrokerError, RemotingError } from '../../remoting/index.js';
import { BrokerAddressNotFoundError, NoRetryQueueError } from '../errors.js';
import type { MessageExt } from '../core/message.js';
import type { PushHost } from './push-host.js';

const log = createDebug('rocketwire:consumer');

/** What sending a message back reads of the consumer (the client instance, once started). */
export type SendBackHost = Pick<PushHost, 'config' | 'recorder' | 'maxReconsumeTimes' | 'instance' | 'publishIndex'>;

const SEND_MSG_BACK_TIMEOUT_MS = 5000;
/** The internal producer's defaults (DefaultMQProducer): 1 + retryTimesWhenSendFailed (2) attempts within sendMsgTimeout (3 s). */
const REPUBLISH_ATTEMPTS = 3;
const REPUBLISH_TIMEOUT_MS = 3000;

// Failed messages back to the broker
// (docs/protocol-facts.md#concurrent-consumption-and-send-back): CONSUMER_SEND_MSG_BACK, else the internal producer.

/**
 * Concurrent path (ConsumeMessageConcurrentlyService.sendMessageBack): CONSUMER_SEND_MSG_BACK to the master of the
 * queue's broker, falling back to
 * republishing to the retry topic. Resolves true when one of them stored the message.
 */
export async function sendMessageBack(
  impl: SendBackHost,
  msg: MessageExt,
  delayLevel: number,
  brokerName: string,
): Promise<boolean> {
  const instance = impl.instance;
  if (!instance) return false;
  // A static topic's message has a logic queue's mock broker name: Java sends it back as a normal
  // message to the retry topic at once (sendMessageBackAsNormalMessage).
  if (isLogicQueueBroker(brokerName)) return republishToRetry(impl, msg, msg.reconsumeTimes + 1);
  try {
    // Java's findBrokerAddressInPublish: the master only. A slave would refuse it (or, worse, store a
    // retry message nobody replicates), so without a master the message goes the republish way.
    const addr = instance.findBrokerMasterAddress(brokerName);
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
 * The internal producer path (CLIENT_INNER_PRODUCER, Java's sendMessageBackAsNormalMessage): SEND_MESSAGE_V2
 * of a copy to %RETRY%group with RETRY_TOPIC, ORIGIN_MESSAGE_ID, delay level 3 + reconsumeTimes, and
 * RECONSUME_TIME/MAX_RECONSUME_TIMES moved into header fields j/l (a value ≥ max makes the broker store
 * it in the DLQ). Sent as Java's default producer sends: to masters only, up to 3 attempts within 3 s,
 * each retry on a queue of another broker than the one that just failed, retrying transport failures
 * and retriable broker answers only.
 */
export async function republishToRetry(impl: SendBackHost, msg: MessageExt, reconsumeTime: number): Promise<boolean> {
  const instance = impl.instance;
  if (!instance) return false;
  const topic = retryTopic(impl.config.consumerGroup);
  const { clock } = impl.config;
  const begin = clock.now();
  let queues: MessageQueue[];
  try {
    // Only brokers with a master carry publish queues (topicRouteData2TopicPublishInfo).
    queues = topicRouteToPublishQueues(topic, await instance.getTopicRoute(topic));
    if (queues.length === 0) throw new NoRetryQueueError(topic);
  } catch (err) {
    log('republishing %s to %s failed: %s', msg.msgId, topic, (err as Error).message);
    return false;
  }
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
  const properties = encodeProperties(props);
  let lastBrokerName: string | undefined;
  for (let attempt = 0; attempt < REPUBLISH_ATTEMPTS; attempt++) {
    const left = REPUBLISH_TIMEOUT_MS - (clock.now() - begin);
    if (left <= 0) break;
    const q = selectQueue(impl, queues, lastBrokerName);
    try {
      const addr = instance.findBrokerMasterAddress(q.brokerName);
      if (!addr) throw new BrokerAddressNotFoundError(q.brokerName);
      await instance.invoke(
        addr,
        Operations.SEND_MESSAGE_V2,
        {
          producerGroup: CLIENT_INNER_PRODUCER_GROUP,
          topic,
          defaultTopic: AUTO_CREATE_TOPIC_KEY_TOPIC,
          defaultTopicQueueNums: 4,
          queueId: q.queueId,
          // A message refused undecoded (inflate.ts) still carries its stored, compressed body: the
          // copy says so, as the stored record did.
          sysFlag:
            (msg.sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0
              ? msg.sysFlag & (MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_TYPE_MASK)
              : 0,
          bornTimestamp: clock.now(),
          flag: msg.flag ?? 0,
          properties,
          reconsumeTimes: reconsumeTime,
          unitMode: false,
          maxReconsumeTimes: impl.maxReconsumeTimes,
          batch: false,
          bname: q.brokerName,
        },
        msg.body,
        { timeoutMs: left },
      );
      impl.recorder.republished++;
      return true;
    } catch (err) {
      const e = err as Error;
      const retriable =
        (e instanceof RemotingError || e instanceof BrokerError || e instanceof BrokerAddressNotFoundError) &&
        e.retriable;
      log(
        'republishing %s to %s/%d failed (attempt %d, %s): %s',
        msg.msgId,
        q.brokerName,
        q.queueId,
        attempt + 1,
        retriable ? 'retriable' : 'final',
        e.message,
      );
      if (!retriable) return false;
      lastBrokerName = q.brokerName;
    }
  }
  return false;
}

/** TopicPublishInfo.selectOneMessageQueue(lastBrokerName): round robin, skipping the broker that just failed when another has a queue. */
function selectQueue(impl: SendBackHost, queues: MessageQueue[], lastBrokerName: string | undefined): MessageQueue {
  if (lastBrokerName !== undefined) {
    for (let i = 0; i < queues.length; i++) {
      const q = queues[impl.publishIndex++ % queues.length]!;
      if (q.brokerName !== lastBrokerName) return q;
    }
  }
  return queues[impl.publishIndex++ % queues.length]!;
}
