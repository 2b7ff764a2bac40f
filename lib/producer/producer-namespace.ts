import { queueWithNamespace, queueWithoutNamespace, wrapNamespace } from '../client/index.js';
import type { Message } from './message.js';
import type { SendResult } from './send-result.js';

/**
 * The producer's namespace boundary, as DefaultMQProducer: the group is wrapped at construction
 * (start() in Java), every message's topic and a chosen queue on the way out
 * (msg.setTopic(withNamespace(...)), queueWithNamespace), and the send result's queue comes back
 * with the namespace stripped (MQClientAPIImpl#processSendResponse). The caller's message is not
 * changed: the wrapped topic goes into a copy.
 */
export function namespacedMessage(namespace: string | undefined, msg: Message): Message {
  if (!namespace || typeof msg?.topic !== 'string') return msg;
  const copy = { ...msg, topic: wrapNamespace(namespace, msg.topic) };
  instanceIds.set(copy, namespace);
  return copy;
}

/** A member of a batch: only the topic is wrapped (Java sets INSTANCE_ID on the MessageBatch, not its members). */
export function namespacedBatchMember(namespace: string | undefined, msg: Message): Message {
  if (!namespace || typeof msg?.topic !== 'string') return msg;
  return { ...msg, topic: wrapNamespace(namespace, msg.topic) };
}

/**
 * DefaultMQProducerImpl#sendKernelImpl puts the namespace into property INSTANCE_ID of every message
 * it sends (msg.setInstanceId); INSTANCE_ID is reserved, so the copy made above is marked here and
 * encodeMessageProperties adds it after UNIQ_KEY, where Java adds it.
 */
const instanceIds = new WeakMap<Message, string>();

export function instanceIdOf(msg: Message): string | undefined {
  return instanceIds.get(msg);
}

export function namespacedSendOptions<
  O extends { queue?: { topic: string; brokerName: string; queueId: number } | undefined },
>(namespace: string | undefined, opts: O): O {
  if (!namespace || !opts.queue) return opts;
  return { ...opts, queue: queueWithNamespace(namespace, opts.queue) };
}

export function resultWithoutNamespace(namespace: string | undefined, r: SendResult): SendResult {
  if (!namespace) return r;
  r.messageQueue = queueWithoutNamespace(namespace, r.messageQueue);
  return r;
}
