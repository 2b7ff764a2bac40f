import { ConsumerStateError } from '../errors.js';
import type { MessageExt } from '../core/message.js';
import type { LitePullConsumerImpl } from './lite-pull-consumer-impl.js';
import type { ConsumeRequest } from './lite-pull-cache.js';

// Async iteration over the lite pull consumer (`for await (const msg of consumer.messages())`): it polls
// only when the loop asks for the next message, so its pull-ahead cache fills to its limits and stops.
// A message is committed once the loop has moved past it; `break`, `return` or a throw shut the
// consumer down with the message the body was on left uncommitted (push/push-iterator.ts says more).

async function startLite(impl: LitePullConsumerImpl): Promise<void> {
  if (impl.state === 'CREATED') await impl.start();
  else if (impl.state !== 'RUNNING')
    throw new ConsumerStateError(impl.state, `cannot iterate a consumer in state ${impl.state}`);
}

/** The loop moved past `msg`: commit the offset after it (in memory; persisted every interval and at shutdown). */
function commitPast(impl: LitePullConsumerImpl, req: ConsumeRequest, msg: MessageExt): void {
  const st = req.queue;
  if (st.pq.dropped || st.generation !== req.generation) return;
  st.consumeOffset = msg.queueOffset + 1;
  impl.offsetStore.updateOffset(st.mq, st.consumeOffset, false);
}

export async function* liteMessages(impl: LitePullConsumerImpl): AsyncGenerator<MessageExt, void, undefined> {
  await startLite(impl);
  try {
    while (impl.state === 'RUNNING') {
      const req = await impl.takeRequest(impl.config.pollTimeoutMs);
      if (req === null) continue;
      impl.removeTaken(req);
      for (const msg of req.msgs) {
        if (req.queue.pq.dropped || req.generation !== req.queue.generation) break; // taken away or sought meanwhile
        yield msg;
        commitPast(impl, req, msg);
      }
    }
  } finally {
    await impl.shutdown();
  }
}

export async function* liteBatches(impl: LitePullConsumerImpl): AsyncGenerator<MessageExt[], void, undefined> {
  await startLite(impl);
  try {
    while (impl.state === 'RUNNING') {
      const req = await impl.takeRequest(impl.config.pollTimeoutMs);
      if (req === null) continue;
      impl.removeTaken(req);
      yield req.msgs;
      commitPast(impl, req, req.msgs[req.msgs.length - 1]!);
    }
  } finally {
    await impl.shutdown();
  }
}
