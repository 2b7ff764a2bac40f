import { stringOption } from '../common.js';
import type { AdminCommandGroup } from './shared.js';

/** mqadmin's %.2f of a TPS figure. */
function tps(v: number): string {
  return v.toFixed(2);
}

/** `rocketwire admin stats all`: mqadmin statsAll. */
export const stats: AdminCommandGroup = {
  name: 'stats',
  summary: 'messages in and out per topic and group over the last minute and day (mqadmin statsAll)',
  subcommands: [
    {
      name: 'all',
      summary:
        'for every topic and each group consuming it: backlog, in/out TPS of the last minute, in/out messages of the last 24 h (mqadmin statsAll)',
      options: { topic: { type: 'string' }, active: { type: 'boolean' } },
      help: [
        '  --topic T        only topic T (mqadmin -t)',
        '  --active         only rows with messages in or out in the last 24 h (mqadmin -a)',
      ].join('\n'),
      async run(admin, v, out) {
        const rows = await admin.statsAll({ topic: stringOption(v, 'topic'), activeOnly: v.active === true });
        out.emit(rows, () =>
          out.table(
            ['#Topic', '#Consumer Group', '#Accumulation', '#InTPS', '#OutTPS', '#InMsg24Hour', '#OutMsg24Hour'],
            rows.map((r) => [
              r.topic,
              r.group ?? '',
              String(r.accumulation),
              tps(r.inTps),
              r.outTps === null ? '' : tps(r.outTps),
              String(r.inMsg24Hour),
              r.outMsg24Hour === null ? 'NO_CONSUMER' : String(r.outMsg24Hour),
            ]),
          ),
        );
      },
    },
  ],
};
