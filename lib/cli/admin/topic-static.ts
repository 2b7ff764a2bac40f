import { UsageError, intOption, stringOption } from '../common.js';
import { need, type AdminSubcommand } from './shared.js';

function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return names.length > 0 ? names : undefined;
}

/** `rocketwire admin topic update-static`: mqadmin updateStaticTopic (RIP-21 logic queues). */
export const updateStatic: AdminSubcommand = {
  name: 'update-static',
  summary: 'create a static topic (fixed logic queues) or add logic queues to one (mqadmin updateStaticTopic)',
  options: {
    topic: { type: 'string' },
    queues: { type: 'string' },
    brokers: { type: 'string' },
    clusters: { type: 'string' },
  },
  help: [
    '  --topic T              the topic',
    '  --queues N             logic queues in all (more than it has: a static topic never shrinks)',
    '  --brokers A,B          broker names to place new logic queues on (mqadmin -b)',
    '  --clusters C           or every broker of these clusters (mqadmin -c)',
  ].join('\n'),
  async run(admin, v, out) {
    const topic = need(v, 'topic');
    const queues = stringOption(v, 'queues');
    if (queues === undefined) throw new UsageError('--queues is required');
    const brokers = list(stringOption(v, 'brokers'));
    const clusters = list(stringOption(v, 'clusters'));
    if ((brokers === undefined) === (clusters === undefined))
      throw new UsageError('give one of --brokers or --clusters');
    const r = await admin.updateStaticTopic({
      topic,
      queueNums: intOption('queues', queues, 0, 1, 65_535),
      ...(brokers ? { brokers } : {}),
      ...(clusters ? { clusters } : {}),
    });
    out.emit(r, () => {
      out.line(`static topic ${r.topic}: ${r.totalQueues} logic queues, epoch ${r.epoch}`);
      out.table(
        ['brokerName', 'master', 'logicQueues'],
        r.brokers.map((b) => [b.brokerName, b.addr, b.logicQueues.length > 0 ? b.logicQueues.join(',') : '-']),
      );
    });
  },
};
