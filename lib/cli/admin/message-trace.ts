import { formatMessageTrace } from '../../admin/index.js';
import { intOption, stringOption } from '../common.js';
import { need, type AdminSubcommand } from './shared.js';

/** `rocketwire admin message trace MSGID`: mqadmin queryMsgTraceById, its columns and defaults. */
export const messageTrace: AdminSubcommand = {
  name: 'trace',
  summary: "a message's trace records from the trace topic (mqadmin queryMsgTraceById)",
  positional: 'id',
  options: {
    id: { type: 'string' },
    'trace-topic': { type: 'string' },
    max: { type: 'string' },
    begin: { type: 'string' },
    end: { type: 'string' },
  },
  help: [
    "  MSGID / --id ID       the producer's msgId (UNIQ_KEY): trace messages are keyed by it",
    '  --trace-topic T       the trace topic (default RMQ_SYS_TRACE_TOPIC)',
    '  --max N               most trace messages per broker (default 64)',
    '  --begin MS            stored at or after (default 0)',
    '  --end MS              stored at or before (default: no bound)',
    '  Prints Pub records, then the SubAfter records per consumer group, as mqadmin does;',
    '  --json gives every record found (SubBefore too), as AdminClient.messageTrace() returns them.',
  ].join('\n'),
  async run(admin, v, out) {
    const end = stringOption(v, 'end');
    const views = await admin.messageTrace(need(v, 'id'), {
      traceTopic: stringOption(v, 'trace-topic'),
      maxNum: intOption('max', stringOption(v, 'max'), 64, 1, 64),
      beginTimestamp: intOption('begin', stringOption(v, 'begin'), 0),
      ...(end !== undefined ? { endTimestamp: intOption('end', end, 0) } : {}),
    });
    out.emit(views, () => out.io.stdout.write(formatMessageTrace(views)));
  },
};
