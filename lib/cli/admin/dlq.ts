import { intOption, stringOption } from '../common.js';
import { need, type AdminCommandGroup } from './shared.js';

/** `rocketwire admin dlq resend`. */
export const dlq: AdminCommandGroup = {
  name: 'dlq',
  summary: "re-send a group's dead-lettered messages to their original topics",
  subcommands: [
    {
      name: 'resend',
      summary: 'read %DLQ%<group> and send every message again to the topic it came from (RETRY_TOPIC)',
      options: { group: { type: 'string' }, from: { type: 'string' }, max: { type: 'string' } },
      help: [
        '  --group G        the consumer group',
        '  --from N         start at this DLQ queue offset (default: the first)',
        '  --max N          re-send at most N messages',
      ].join('\n'),
      async run(admin, v, out) {
        const opts: { fromOffset?: number; maxMessages?: number } = {};
        if (stringOption(v, 'from') !== undefined) opts.fromOffset = intOption('from', stringOption(v, 'from'), 0);
        if (stringOption(v, 'max') !== undefined) opts.maxMessages = intOption('max', stringOption(v, 'max'), 0, 1);
        const r = await admin.dlqResend(need(v, 'group'), opts);
        out.emit(r, () => {
          out.table(
            ['topic', 'resent'],
            Object.entries(r.resent).map(([t, n]) => [t, String(n)]),
          );
          out.line(
            `read ${r.read} from ${r.dlqTopic}, resent ${Object.values(r.resent).reduce((a, n) => a + n, 0)}, skipped ${r.skipped} (no RETRY_TOPIC)`,
          );
        });
      },
    },
  ],
};
