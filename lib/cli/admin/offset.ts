import { UsageError } from '../common.js';
import type { ResetTarget } from '../../admin/index.js';
import { need, type AdminCommandGroup } from './shared.js';
import { offsetClone, offsetSkip } from './operator-subcommands.js';

function target(text: string): ResetTarget {
  if (text === 'first') return { to: 'first' };
  if (text === 'last') return { to: 'last' };
  const m = /^timestamp:(\d+)$/.exec(text);
  if (m && Number.isSafeInteger(Number(m[1]))) return { to: 'timestamp', timestamp: Number(m[1]) };
  throw new UsageError(`--to must be first, last or timestamp:MS, got "${text}"`);
}

/** `rocketwire admin offset reset`. */
export const offset: AdminCommandGroup = {
  name: 'offset',
  summary:
    "reset a group's offsets by time, skip its backlog, or clone another group's (mqadmin resetOffsetByTime, skipAccumulatedMessage, cloneGroupOffset)",
  subcommands: [
    {
      name: 'reset',
      summary:
        'set every queue of the topic to its first or last offset, or to the first message stored at or after a time',
      options: { group: { type: 'string' }, topic: { type: 'string' }, to: { type: 'string' } },
      help: [
        '  --group G        the consumer group (running or stopped)',
        '  --topic T        the topic',
        '  --to WHERE       first | last | timestamp:MS',
      ].join('\n'),
      async run(admin, v, out) {
        const group = need(v, 'group');
        const topic = need(v, 'topic');
        const to = target(need(v, 'to'));
        const r = await admin.resetOffset(group, topic, to);
        out.emit({ group, topic, ...r }, () => {
          out.table(
            ['brokerName', 'queueId', 'offset'],
            r.queues.map((q) => [q.brokerName, String(q.queueId), String(q.offset)]),
          );
          if (r.mode === 'offline') out.line('(no client online: offsets written with UPDATE_CONSUMER_OFFSET)');
        });
      },
    },
    offsetClone,
    offsetSkip,
  ],
};
