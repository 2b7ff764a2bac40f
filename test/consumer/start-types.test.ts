// Type-level test: this file compiles only if the natural handler forms are accepted by start() and
// onMessage(), and each `@ts-expect-error` line fails to compile if the form it marks were accepted.
// The checks run through `tsc` (the build); the tap test below only constructs consumers.
//
// An async handler's promise may resolve to any string (AsyncConsumeResult): TypeScript 5.9 widens
// a lone string literal returned from an async function whose contextual return type is
// `Status | PromiseLike<Status>`, so a strict promise type would refuse the most natural form,
// `async (msgs) => { …; return 'CONSUME_SUCCESS'; }`. Its value is checked at run time (anything but
// the success statuses is a retry or a suspend), and the run-time test at the bottom pins that.
import t from 'tap';
import {
  ConsumeConcurrentlyStatus,
  ConsumeOrderlyStatus,
  PushConsumer,
  type ConsumeConcurrentlyContext,
  type ConsumeOrderlyContext,
  type MessageListenerConcurrently,
  type MessageListenerOrderly,
} from '../../lib/consumer/index.js';

const base = { consumerGroup: 'cg', namesrvAddr: '127.0.0.1:9876' };

/** Never called: every line must type-check (or fail where marked). */
export async function typeChecks(flag: boolean): Promise<void> {
  const c = new PushConsumer(base);
  // concurrent: sync or async, string literal or enum, block or expression bodies
  await c.start(async (msgs) => {
    for (const m of msgs) m.body.toString();
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  await c.start(async (msgs) => {
    if (msgs.length === 0) return 'RECONSUME_LATER';
    return 'CONSUME_SUCCESS';
  });
  await c.start((msgs) => {
    for (const m of msgs) m.body.toString();
    return 'CONSUME_SUCCESS';
  });
  await c.start(() => 'RECONSUME_LATER');
  await c.start((msgs, ctx) => {
    ctx.ackIndex = msgs.length - 1;
    ctx.delayLevelWhenNextConsume = 3;
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  await c.start(async () => ConsumeConcurrentlyStatus.RECONSUME_LATER);
  await c.start(() => undefined);
  c.onMessage((msgs) => (msgs.length > 0 ? 'CONSUME_SUCCESS' : 'RECONSUME_LATER'));
  const typed: MessageListenerConcurrently = async () => ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  await c.start(typed);
  await c.start();
  await c.start(async (msgs) => {
    for (const m of msgs) m.body.toString();
    return 'CONSUME_SUCCESS';
  });
  await c.start(async () => 'CONSUME_SUCCESS');
  // @ts-expect-error not a concurrent status
  await c.start(() => 'BOGUS');
  // @ts-expect-error a status is a string
  await c.start(async () => 42);
  // the KafkaJS habit: an async handler that returns nothing acknowledges
  await c.start(async () => {});
  await c.start(async (msgs) => {
    for (const m of msgs) m.body.toString();
  });
  // @ts-expect-error an orderly status on a concurrent consumer
  await c.start(() => 'SUCCESS');
  // @ts-expect-error a concurrent handler has no autoCommit in its context
  await c.start((_msgs, ctx) => (ctx.autoCommit ? 'CONSUME_SUCCESS' : 'RECONSUME_LATER'));

  // orderly, chosen by the option
  const o = new PushConsumer({ ...base, orderly: true });
  await o.start(async (msgs, ctx) => {
    ctx.autoCommit = msgs.length > 0;
    return ConsumeOrderlyStatus.SUCCESS;
  });
  await o.start((_msgs, ctx) => {
    ctx.suspendCurrentQueueTimeMillis = 100;
    return 'SUSPEND_CURRENT_QUEUE_A_MOMENT';
  });
  await o.start(async () => ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT);
  o.onMessage(() => 'COMMIT');
  const typedOrderly: MessageListenerOrderly = () => 'ROLLBACK';
  await o.start(typedOrderly);
  await o.start(async (msgs) => {
    for (const m of msgs) m.body.toString();
    return 'SUCCESS';
  });
  // @ts-expect-error a concurrent status on an orderly consumer
  await o.start(() => 'CONSUME_SUCCESS');
  // @ts-expect-error not an orderly status
  await o.start(() => 'BOGUS');
  // @ts-expect-error a concurrent handler on an orderly consumer
  await o.start(typed);

  // explicitly concurrent
  const f = new PushConsumer({ ...base, orderly: false });
  await f.start(() => 'CONSUME_SUCCESS');
  // @ts-expect-error an orderly handler on a concurrent consumer
  await f.start(typedOrderly);

  // the mode known only at run time: either form, either context
  const e = new PushConsumer({ ...base, orderly: flag });
  await e.start((_msgs, ctx: ConsumeConcurrentlyContext | ConsumeOrderlyContext) =>
    'ackIndex' in ctx ? 'CONSUME_SUCCESS' : 'SUCCESS',
  );
  await e.start(typed);
  await e.start(typedOrderly);
  // @ts-expect-error not a status of either mode
  await e.start(() => 'BOGUS');

  // a consumer of either mode may be held as PushConsumer<boolean>
  const any: PushConsumer<boolean>[] = [c, o, f, e];
  void any;
}

t.test('the handler type follows the orderly option', async (t) => {
  t.equal(new PushConsumer(base).orderly, false);
  t.equal(new PushConsumer({ ...base, orderly: true }).orderly, true);
});
