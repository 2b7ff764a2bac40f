import type { MessageQueue } from '../../../protocol/index.js';
import { queueWithNamespace, queueWithoutNamespace, withoutNamespace } from '../../client/index.js';
import type { MessageExt } from '../core/message.js';

/**
 * The lite pull consumer's namespace boundary, as DefaultLitePullConsumer: the group and every
 * topic or queue the application names are wrapped on the way in (withNamespace,
 * queuesWithNamespace), and what comes back is stripped: the topic of each polled message
 * (DefaultLitePullConsumerImpl#resetTopic) and of the queues fetchMessageQueues() answers
 * (parseMessageQueues). assignment() is stripped too, where Java hands its wrapped queues out, so
 * what assignment() answers can be passed to seek() or pause() and compared with
 * fetchMessageQueues() as the application named them.
 */
export function queuesIn(namespace: string | undefined, queues: readonly MessageQueue[]): MessageQueue[] {
  // a malformed entry is the consumer's own error to report, so it passes through as given
  return queues.map((q) => (q && typeof q.topic === 'string' ? queueWithNamespace(namespace, q) : q));
}

export function queueIn(namespace: string | undefined, queue: MessageQueue): MessageQueue {
  return queue && typeof queue.topic === 'string' ? queueWithNamespace(namespace, queue) : queue;
}

export function queuesOut(namespace: string | undefined, queues: MessageQueue[]): MessageQueue[] {
  return namespace ? queues.map((q) => queueWithoutNamespace(namespace, q)) : queues;
}

export function messagesOut<T extends MessageExt[]>(namespace: string | undefined, msgs: T): T {
  if (namespace) for (const m of msgs) m.topic = withoutNamespace(namespace, m.topic);
  return msgs;
}

export async function* iterateOut<T extends MessageExt | MessageExt[]>(
  namespace: string | undefined,
  it: AsyncGenerator<T, void, undefined>,
): AsyncGenerator<T, void, undefined> {
  if (!namespace) return yield* it;
  for await (const v of it) {
    if (Array.isArray(v)) messagesOut(namespace, v);
    else (v as MessageExt).topic = withoutNamespace(namespace, (v as MessageExt).topic);
    yield v;
  }
}
