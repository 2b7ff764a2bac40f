import createDebug from '../debug.js';
import {
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  encodeProperties,
  Operations,
  ResponseCode,
  UniqKeyGenerator,
  type MessageQueue,
  type TopicRouteData,
} from '../../protocol/index.js';
import {
  defaultClientIp,
  MQClientInstance,
  topicRouteToPublishQueues,
  type CallReply,
  type ClientOptions,
} from '../client/index.js';
import { systemClock } from '../clock.js';
import { BrokerError, brokerErrorFromResponse } from '../remoting/index.js';
import { TraceSendError } from './errors.js';

const log = createDebug('rocketwire:trace');

/** What the dispatcher sends a batch of records with: one trace message, its keys, to a topic. */
export interface TraceSender {
  send(topic: string, data: string, keys: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** Java's TraceConstants: the trace producer's group prefix and the instance name of its client. */
export const TRACE_GROUP_NAME_PREFIX = '_INNER_TRACE_PRODUCER';
export const TRACE_INSTANCE_NAME = 'PID_CLIENT_INNER_TRACE_PRODUCER';
/** Java's trace producer: sendMsgTimeout 5000 ms. */
export const TRACE_SEND_TIMEOUT_MS = 5000;

let groupCounter = 0;
let instanceCounter = 0;

/** `_INNER_TRACE_PRODUCER-<group>-<PRODUCER|CONSUMER>-<n>`, as AsyncTraceDispatcher#genGroupNameForTrace. */
export function traceProducerGroup(hostGroup: string, type: 'PRODUCER' | 'CONSUMER'): string {
  return `${TRACE_GROUP_NAME_PREFIX}-${hostGroup}-${type}-${++groupCounter}`;
}

/**
 * The dispatcher's own producer (Java's traceProducer, a DefaultMQProducer): a client instance of
 * its own (instance name PID_CLIENT_INNER_TRACE_PRODUCER_<namesrv>, shared by the dispatchers of a
 * process as in Java), SEND_MESSAGE_V2 round-robin over the trace topic's queues with a 5 s
 * timeout, and the TBW102 auto-create path for a custom trace topic the name server does not know.
 * It never traces itself.
 */
export class TraceProducer implements TraceSender {
  private starting: Promise<MQClientInstance> | null = null;
  private readonly queues = new Map<string, MessageQueue[]>();
  private index = 0;
  private readonly uniqKeys: UniqKeyGenerator;
  private closed = false;

  constructor(
    private readonly client: ClientOptions,
    readonly group: string,
  ) {
    this.uniqKeys = new UniqKeyGenerator({ ip: client.clientIp ?? defaultClientIp() });
  }

  private start(): Promise<MQClientInstance> {
    this.starting ??= (async () => {
      // Another clock cannot share the Java-named instance (its tasks run on one clock): such a
      // dispatcher gets an instance of its own.
      const shared = (this.client.clock ?? systemClock) === systemClock;
      const instanceName = `${TRACE_INSTANCE_NAME}_${this.client.namesrvAddr}${shared ? '' : `#${++instanceCounter}`}`;
      const instance = MQClientInstance.acquire({ ...this.client, instanceName });
      try {
        instance.registerProducer(this.group);
        await instance.start();
      } catch (err) {
        await instance.release();
        throw err;
      }
      return instance;
    })();
    return this.starting;
  }

  async send(topic: string, data: string, keys: readonly string[]): Promise<void> {
    if (this.closed) throw new TraceSendError(topic, 'the trace producer is closed');
    const instance = await this.start();
    const queues = await this.publishQueues(instance, topic);
    const mq = queues[(this.index = (this.index + 1) & 0x7fffffff) % queues.length]!;
    const addr = instance.findBrokerMasterAddress(mq.brokerName);
    if (!addr) throw new TraceSendError(topic, `broker ${mq.brokerName} has no master address`);
    const now = (this.client.clock ?? systemClock).now();
    const properties = encodeProperties({ KEYS: keys.join(' '), WAIT: 'true', UNIQ_KEY: this.uniqKeys.next(now) });
    const op = Operations.SEND_MESSAGE_V2;
    const header = {
      producerGroup: this.group,
      topic,
      defaultTopic: AUTO_CREATE_TOPIC_KEY_TOPIC,
      defaultTopicQueueNums: 4,
      queueId: mq.queueId,
      sysFlag: 0,
      bornTimestamp: now,
      flag: 0,
      properties,
      reconsumeTimes: 0,
      unitMode: false,
      batch: false,
      bname: mq.brokerName,
    };
    let reply: CallReply<typeof op>;
    try {
      reply = await instance.call(addr, op, header, Buffer.from(data, 'utf8'), { timeoutMs: TRACE_SEND_TIMEOUT_MS });
    } catch (err) {
      // a queue's route may be stale: look it up again next time
      if (err instanceof BrokerError) this.queues.delete(topic);
      throw err;
    }
    if (reply.code !== ResponseCode.SUCCESS) {
      // a store's partial success (FLUSH_DISK_TIMEOUT…) is a failed trace send too
      this.queues.delete(topic);
      throw brokerErrorFromResponse(reply, { addr, requestCode: op.code });
    }
  }

  private async publishQueues(instance: MQClientInstance, topic: string): Promise<MessageQueue[]> {
    const cached = this.queues.get(topic);
    if (cached && cached.length > 0) return cached;
    let route: TopicRouteData;
    try {
      route = await instance.getTopicRoute(topic, { refresh: true });
    } catch (err) {
      if (!(err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST)) throw err;
      // As Java's producer: borrow the brokers of TBW102; the broker creates the topic on the first send.
      const template = await instance.queryTopicRoute(AUTO_CREATE_TOPIC_KEY_TOPIC);
      route = {
        ...template,
        queueDatas: template.queueDatas.map((q) => ({
          ...q,
          readQueueNums: Math.min(4, q.readQueueNums),
          writeQueueNums: Math.min(4, q.writeQueueNums),
        })),
      };
      // the instance learns the brokers' addresses from the routes it holds
      instance.setTopicRoute(topic, route);
      log('trace topic %s unknown: sending through %s', topic, AUTO_CREATE_TOPIC_KEY_TOPIC);
    }
    const queues = topicRouteToPublishQueues(topic, route);
    if (queues.length === 0) throw new TraceSendError(topic, 'no writable queue');
    this.queues.set(topic, queues);
    return queues;
  }

  async close(): Promise<void> {
    this.closed = true;
    const starting = this.starting;
    if (!starting) return;
    const instance = await starting.catch(() => null);
    if (!instance) return;
    instance.unregisterProducer(this.group);
    await instance.release();
  }
}
