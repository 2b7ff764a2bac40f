import type { MessageExt } from '../../../protocol/index.js';
import { startConsumerTrace, type ConsumerTrace } from '../../trace/trace-hooks.js';
import type { TraceContext } from '../../trace/trace-types.js';
import type { ResolvedSimpleConsumerOptions } from './simple-consumer-options.js';

/**
 * Message trace of the SimpleConsumer (enableTrace). It has no handler: what Java's push consumer
 * writes around a handler call is written around the application's own consumption. SubBefore
 * when receive() hands messages over (one record per receive, as one handler call is one), and a
 * SubAfter per message when it is acked: success, ConsumeReturnType SUCCESS, cost the time from
 * hand-over to ack. changeInvisibleDuration (more time, or a sooner retry: the application's
 * choice) carries the message's record over to its new handle; a message never acked gets no
 * SubAfter, as a push consumer stopped in its handler writes none. Records name the group and topic without the namespace, as Java's
 * ConsumeMessageTraceHookImpl does.
 */
export class SimpleConsumerTrace {
  private readonly trace: ConsumerTrace;
  /** The SubBefore each handed-over message belongs to. */
  private readonly pending = new WeakMap<object, TraceContext>();

  constructor(o: ResolvedSimpleConsumerOptions) {
    this.trace = startConsumerTrace({
      consumerGroup: o.consumerGroup,
      namesrvAddr: o.namesrvAddr,
      clientIp: o.client.clientIp,
      serializeType: o.client.serializeType,
      acl: o.client.acl,
      mqClientApiTimeoutMs: o.client.mqClientApiTimeoutMs,
      clock: o.clock,
      traceTopic: o.traceTopic,
    });
  }

  handedOver(msgs: readonly MessageExt[]): void {
    const before = this.trace.before(msgs);
    if (before === null) return;
    for (const m of msgs) this.pending.set(m, before);
  }

  /** The messages were acked. */
  acked(msgs: readonly MessageExt[]): void {
    for (const m of msgs) {
      const before = this.pending.get(m);
      if (!before) continue;
      this.pending.delete(m);
      const bean = before.traceBeans.find((b) => b.msgId === m.msgId);
      if (!bean) continue;
      this.trace.after({ ...before, traceBeans: [bean] }, 1, {
        status: 'CONSUME_SUCCESS',
        threw: false,
        timedOut: false,
      });
    }
  }

  /** changeInvisibleDuration made a new handle for a message still being consumed: its trace goes on with it. */
  moved(from: MessageExt, to: MessageExt): void {
    const before = this.pending.get(from);
    if (before) this.pending.set(to, before);
  }

  shutdown(): Promise<void> {
    return this.trace.shutdown();
  }
}
