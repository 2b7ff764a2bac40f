import { sleep } from '../../clock.js';
import { ConsumerStateError } from '../errors.js';
import type { MessageListener } from '../core/consume-types.js';
import type { MessageExt } from '../core/message.js';
import type { PushConsumerImpl } from './push-consumer-impl.js';

// Async iteration over the push and lite pull consumers (`for await (const msg of consumer.messages())`).
//
// Backpressure goes through the flow control that already exists. The push consumer's handler call
// resolves only when the loop has taken its messages and moved past them, so while the loop body
// runs, at most consumeThreadMin calls are in flight and the rest of what was pulled waits in the
// ProcessQueues, whose count / size / span limits park the pulls. The lite pull consumer polls only
// when the loop asks for the next message, so its pull-ahead cache fills to its limits and stops.
//
// A message is committed only once the loop has moved past it (asked for the next one). `break`,
// `return` and a throw from the body end the iteration: the consumer is shut down (its committed
// offsets persisted), and the message the body was on and everything not yet taken stay uncommitted,
// so another member, or this group later, gets them again. For the push consumer the pending handler
// calls are never answered before the shutdown dropped their queues, so no result of theirs counts
// (no send-back, no offset), as for a queue taken away by a rebalance.

/** How often a push iteration waiting for messages looks whether the consumer was shut down from outside. */
const STATE_CHECK_MS = 1000;

interface Pending {
  msgs: MessageExt[];
  /** Messages of the call the loop has moved past. */
  done: number;
  resolve(status: string): void;
}

function pushIteration(impl: PushConsumerImpl) {
  if (impl.state !== 'CREATED') {
    throw new ConsumerStateError(
      impl.state,
      'messages() / batches() start the consumer with their own handler: call them on a consumer not started yet',
    );
  }
  const ready: Pending[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  const ok = impl.config.orderly ? 'SUCCESS' : 'CONSUME_SUCCESS';
  const handler = (msgs: MessageExt[]): Promise<string> =>
    new Promise<string>((resolve) => {
      if (closed) return; // answered after shutdown, when its queue is dropped
      ready.push({ msgs, done: 0, resolve });
      const w = wake;
      wake = null;
      w?.();
    });
  const next = async (): Promise<Pending | null> => {
    while (ready.length === 0) {
      if (impl.state !== 'RUNNING' && impl.state !== 'STARTING') return null;
      const stop = new AbortController();
      await Promise.race([
        new Promise<void>((resolve) => (wake = resolve)),
        sleep(impl.config.clock, STATE_CHECK_MS, stop.signal),
      ]);
      stop.abort();
      wake = null;
    }
    return ready[0]!;
  };
  const finish = async (): Promise<void> => {
    closed = true;
    await impl.shutdown();
    // The queues are dropped now: the consume services discard these results.
    for (const p of ready.splice(0)) p.resolve('RECONSUME_LATER');
  };
  return { handler: handler as unknown as MessageListener, next, ready, ok, finish };
}

/** `wrap` puts the consumer's own listener boundary (its namespace) around the iteration's handler. */
export async function* pushMessages(
  impl: PushConsumerImpl,
  wrap: (l: MessageListener) => MessageListener = (l) => l,
): AsyncGenerator<MessageExt, void, undefined> {
  const it = pushIteration(impl);
  await impl.start(wrap(it.handler));
  try {
    for (;;) {
      const p = await it.next();
      if (p === null) return;
      const msg = p.msgs[p.done]!;
      yield msg;
      // The loop asked for the next message: this one is consumed.
      if (++p.done === p.msgs.length) {
        it.ready.shift();
        p.resolve(it.ok);
      }
    }
  } finally {
    await it.finish();
  }
}

export async function* pushBatches(
  impl: PushConsumerImpl,
  wrap: (l: MessageListener) => MessageListener = (l) => l,
): AsyncGenerator<MessageExt[], void, undefined> {
  const it = pushIteration(impl);
  await impl.start(wrap(it.handler));
  try {
    for (;;) {
      const p = await it.next();
      if (p === null) return;
      yield p.msgs;
      it.ready.shift();
      p.resolve(it.ok);
    }
  } finally {
    await it.finish();
  }
}
