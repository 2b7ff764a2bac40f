import { decodeMessages, ResponseCode, type MessageExt } from '../../../protocol/index.js';
import { carriesMessages } from '../describe.js';
import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import { isPull, queueOf, type DoctorContext, type DoctorFrame } from './observe.js';

interface Delivery {
  ms: number;
}

interface GroupDuplicates {
  group: string;
  count: number;
  first: {
    ms: number;
    lastMs: number;
    msgId: string;
    topic: string;
    queueOffset: number;
    flow: string;
    opaque: number;
    queue: string;
    code: number;
    sinceMs: number;
  } | null;
}

/**
 * The same message delivered twice to one group: a pull answer (PULL_MESSAGE, LITE_PULL_MESSAGE)
 * carrying a msgId (UNIQ_KEY, else the offset msgId) that an earlier answer gave the same group.
 * Retries (reconsumeTimes > 0, %RETRY% topics) are redeliveries by design and are not counted.
 */
export class DuplicateDeliveryCheck implements DoctorCheck {
  readonly id = 'duplicate-delivery';
  private readonly delivered = new Map<string, Delivery>();
  private readonly groups = new Map<string, GroupDuplicates>();

  frame(f: DoctorFrame, ctx: DoctorContext): void {
    const req = f.request;
    const cmd = f.frame.cmd;
    if (
      !f.response ||
      !req ||
      !isPull(req.code) ||
      cmd.code !== ResponseCode.SUCCESS ||
      !carriesMessages(cmd, req.code)
    )
      return;
    const q = queueOf(req);
    if (!q) return;
    let messages: MessageExt[];
    try {
      // The body is a view valid only now: read what is needed, keep strings only.
      messages = decodeMessages(cmd.body!, { decompress: false });
    } catch {
      return; // damaged records: the decoder's own output says so
    }
    const max = ctx.options.maxTrackedMessages;
    for (const m of messages) {
      if (m.reconsumeTimes > 0 || m.topic.startsWith('%RETRY%')) continue;
      const id = m.msgId;
      const key = `${q.group}\u0000${id}`;
      const before = this.delivered.get(key);
      if (!before) {
        if (this.delivered.size >= max) this.delivered.delete(this.delivered.keys().next().value as string);
        this.delivered.set(key, { ms: f.ms });
        continue;
      }
      let g = this.groups.get(q.group);
      if (!g) this.groups.set(q.group, (g = { group: q.group, count: 0, first: null }));
      g.count++;
      if (!g.first) {
        g.first = {
          ms: f.ms,
          lastMs: f.ms,
          msgId: id,
          topic: m.topic,
          queueOffset: m.queueOffset,
          flow: req.flow,
          opaque: req.opaque,
          queue: ctx.queueLabel(q),
          code: req.code,
          sinceMs: before.ms,
        };
      } else g.first.lastMs = f.ms;
    }
  }

  finish(): Finding[] {
    const out: Finding[] = [];
    for (const g of this.groups.values()) {
      const d = g.first!;
      out.push({
        check: this.id,
        severity: 'warning',
        summary:
          `${g.count} message${g.count === 1 ? '' : 's'} delivered again to group ${g.group}` +
          ` (first: msgId ${d.msgId}, ${d.topic} queue offset ${d.queueOffset}, again ${duration(d.ms - d.sinceMs)} after its first delivery)`,
        meaning:
          'The group received a message it had already been given: its committed offset went back (an offset reset, a rebalance ' +
          'that handed the queue over before the offset was committed, a consumer killed before its 5 s offset flush), or a ' +
          'producer sent it twice after a timeout (one msgId, two stored copies). RocketMQ delivers at least once: handlers must ' +
          'be idempotent.',
        evidence: defined({
          firstMs: d.ms,
          lastMs: d.lastMs,
          flow: d.flow,
          opaque: d.opaque,
          queue: d.queue,
          group: g.group,
          code: d.code,
          count: g.count,
        }),
      });
    }
    return out;
  }
}
