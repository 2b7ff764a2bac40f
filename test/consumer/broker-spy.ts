// Watching what reaches the embedded broker, on the clock shared with the consumer under test.
import type { Test } from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt, type PushConsumerOptions } from '../../lib/consumer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, RequestCode, type RemotingCommand } from '../../protocol/index.js';
import { produce, uniqueName } from './helpers.js';

export interface Seen {
  code: number;
  at: number;
  ext: Record<string, string>;
}

/** Records every request the broker gets (code, clock time, header fields), ahead of its processor. */
export function spyOnBroker(broker: EmbeddedBroker, clock: ManualClock): Seen[] {
  const seen: Seen[] = [];
  for (const b of broker.instances) {
    const processors = b.server['processors'];
    for (const [code, fn] of processors) {
      processors.set(code, (req: RemotingCommand, conn) => {
        seen.push({ code, at: clock.now(), ext: { ...(req.extFields ?? {}) } });
        return fn(req, conn);
      });
    }
  }
  return seen;
}

/**
 * Lets every request already written by the consumer reach the broker: one round trip of our own
 * to the broker, in the same event loop, after the microtasks the timers started have run.
 */
export async function quiet(broker: EmbeddedBroker, probe: RemotingClient): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    await probe
      .invoke(broker.broker, createRequest(RequestCode.GET_BROKER_RUNTIME_INFO), { timeoutMs: 3000 })
      .catch(() => undefined);
  }
}

/**
 * An embedded broker (`queues` queues, default 4) and a started consumer on one ManualClock, with
 * `messages` messages produced first and every later request to the broker recorded in `seen`.
 */
export async function clockedConsumer(
  t: Test,
  opts: Partial<PushConsumerOptions> & {
    messages?: number;
    queues?: number;
    /** Runs after the messages are produced, before the consumer starts. */
    beforeStart?: (ctx: {
      broker: EmbeddedBroker;
      probe: RemotingClient;
      topic: string;
      group: string;
    }) => Promise<void>;
  },
  handler: (msgs: MessageExt[]) => unknown,
) {
  const clock = new ManualClock();
  const { messages = 4, queues = 4, beforeStart, ...rest } = opts;
  const broker = await startBroker({ queues, clock });
  t.teardown(() => broker.close());
  const probe = new RemotingClient();
  t.teardown(() => probe.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, messages);
  await beforeStart?.({ broker, probe, topic, group });
  const seen = spyOnBroker(broker, clock);
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    clock,
    ...rest,
  });
  consumer.subscribe(topic);
  await (consumer as PushConsumer<boolean>).start(handler as never);
  t.teardown(() => consumer.shutdown());
  const count = (code: number, where: (s: Seen) => boolean = () => true): number =>
    seen.filter((s) => s.code === code && where(s)).length;
  await quiet(broker, probe);
  return { clock, broker, probe, topic, group, consumer, seen, count, quiet: () => quiet(broker, probe) };
}
