import { wrapNamespace, withoutNamespace } from '../../client/index.js';
import type { MessageListener } from '../core/consume-types.js';
import type { MessageExt } from '../core/message.js';

/**
 * The push consumer's namespace boundary, as DefaultMQPushConsumer: the group and every subscribed
 * topic are wrapped (so its retry topic is `%RETRY%NS%group`), and the messages handed to the
 * handler carry their topic without the namespace (ConsumeMessage*Service#resetRetryAndNamespace,
 * after the retry topic was put back).
 */
export function consumerGroupWithNamespace<
  O extends {
    group?: string | undefined;
    consumerGroup?: string | undefined;
    subscriptions?: Record<string, unknown> | undefined;
  },
>(namespace: string | undefined, options: O): O {
  if (!namespace) return options;
  const out = { ...options };
  if (typeof options.consumerGroup === 'string' && options.consumerGroup !== '')
    out.consumerGroup = wrapNamespace(namespace, options.consumerGroup);
  if (typeof options.group === 'string' && options.group !== '') out.group = wrapNamespace(namespace, options.group);
  if (options.subscriptions && typeof options.subscriptions === 'object') {
    out.subscriptions = Object.fromEntries(
      Object.entries(options.subscriptions).map(([t, e]) => [topicWithNamespace(namespace, t), e]),
    ) as O['subscriptions'];
  }
  return out;
}

export function topicWithNamespace(namespace: string | undefined, topic: string): string {
  return namespace && typeof topic === 'string' ? wrapNamespace(namespace, topic) : topic;
}

export function listenerWithoutNamespace(namespace: string | undefined, listener: MessageListener): MessageListener;
export function listenerWithoutNamespace(
  namespace: string | undefined,
  listener: MessageListener | undefined,
): MessageListener | undefined;
export function listenerWithoutNamespace(
  namespace: string | undefined,
  listener: MessageListener | undefined,
): MessageListener | undefined {
  if (!namespace || typeof listener !== 'function') return listener;
  const strip = (msgs: MessageExt[]): MessageExt[] => {
    for (const m of msgs) m.topic = withoutNamespace(namespace, m.topic);
    return msgs;
  };
  return ((msgs: MessageExt[], ctx: never) =>
    (listener as (m: MessageExt[], c: never) => unknown)(strip(msgs), ctx)) as MessageListener;
}
