/**
 * The set-up the push consumer's POP-mode tests share: an embedded broker with a topic whose group
 * the broker serves by POP (SET_MESSAGE_REQUEST_MODE), and a push consumer of that group with the
 * client's rebalance off, reading from the first message; both closed with the test.
 */
import type { Test } from 'tap';
import { startBroker, type EmbeddedBroker, type StartBrokerOptions } from '../../lib/broker/index.js';
import { PushConsumer, type PushConsumerOptions } from '../../lib/consumer/index.js';
import { createTopic, setPopMode } from './embedded-broker.js';
import { uniqueName } from './names.js';

export interface PopModeTopic {
  b: EmbeddedBroker;
  topic: string;
  group: string;
}

/** A broker (4 queues per topic unless `broker` says), a topic of `topicQueues` queues named after `prefix`, its group in POP mode. */
export async function popModeTopic(
  t: Test,
  prefix: string,
  topicQueues: number,
  broker: StartBrokerOptions = {},
): Promise<PopModeTopic> {
  const b = await startBroker({ queues: 4, ...broker });
  t.teardown(() => b.close());
  const topic = uniqueName(prefix);
  const group = uniqueName('cg');
  await createTopic([b.broker], topic, topicQueues);
  await setPopMode(b.broker, topic, group);
  return { b, topic, group };
}

/** A push consumer of the topic's group in POP mode (not started; shut down with the test). */
export function popPushConsumer<Orderly extends boolean = false>(
  t: Test,
  { b, topic, group }: PopModeTopic,
  options: Partial<PushConsumerOptions> & { orderly?: Orderly } = {},
): PushConsumer<Orderly> {
  const consumer = new PushConsumer<Orderly>({
    group,
    namesrvAddr: b.namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    clientRebalance: false,
    ...options,
  });
  t.teardown(() => consumer.shutdown());
  return consumer;
}
