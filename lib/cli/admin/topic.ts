import { UsageError, intOption, stringOption } from '../common.js';
import { need, timeText, type AdminCommandGroup } from './shared.js';
import { updateStatic } from './topic-static.js';
import { topicPerm } from './operator-subcommands.js';

function perm(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // PermName.isValid (Validators.checkTopicConfig): 0 to 7; 1 inherit, 2 write, 4 read
  return intOption('perm', value, 6, 0, 7);
}

function bool(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${name} must be true or false, got "${value}"`);
}

/** `rocketwire admin topic list|route|status|create|update|delete`. */
export const topic: AdminCommandGroup = {
  name: 'topic',
  summary: 'topics: list, route, status (offsets per queue), create, update, update-static, delete',
  subcommands: [
    {
      name: 'list',
      summary: 'every topic the name server knows (mqadmin topicList)',
      options: {},
      help: '',
      async run(admin, _v, out) {
        const topics = await admin.topicList();
        out.emit(topics, () => {
          for (const t of topics) out.line(t);
        });
      },
    },
    {
      name: 'route',
      summary: "the topic's brokers, addresses, queue counts and perm (mqadmin topicRoute)",
      options: { topic: { type: 'string' } },
      help: '  --topic T        the topic',
      async run(admin, v, out) {
        const rows = await admin.topicRouteBrokers(need(v, 'topic'));
        out.emit(rows, () =>
          out.table(
            ['brokerName', 'cluster', 'master', 'readQueues', 'writeQueues', 'perm', 'sysFlag'],
            rows.map((r) => [
              r.brokerName,
              r.cluster,
              r.addrs['0'] ?? '-',
              String(r.readQueueNums),
              String(r.writeQueueNums),
              `${r.perm} (${r.permText})`,
              String(r.topicSysFlag),
            ]),
          ),
        );
      },
    },
    {
      name: 'status',
      summary: 'min and max offset and last store time of every queue (mqadmin topicStatus)',
      options: { topic: { type: 'string' } },
      help: '  --topic T        the topic',
      async run(admin, v, out) {
        const rows = await admin.topicStatus(need(v, 'topic'));
        out.emit(rows, () =>
          out.table(
            ['brokerName', 'queueId', 'minOffset', 'maxOffset', 'lastUpdated'],
            rows.map((r) => [
              r.brokerName,
              String(r.queueId),
              String(r.minOffset),
              String(r.maxOffset),
              r.lastUpdateTimestamp ? timeText(r.lastUpdateTimestamp) : '',
            ]),
          ),
        );
      },
    },
    {
      name: 'create',
      summary: 'create (or overwrite) a topic on every master, or one cluster or broker (mqadmin updateTopic)',
      options: {
        topic: { type: 'string' },
        'read-queues': { type: 'string' },
        'write-queues': { type: 'string' },
        perm: { type: 'string' },
        order: { type: 'string' },
        cluster: { type: 'string' },
        broker: { type: 'string' },
      },
      help: [
        '  --topic T              the topic',
        '  --read-queues N        read queues per broker (default 8)',
        '  --write-queues N       write queues per broker (default 8)',
        '  --perm P               0 to 7: 2 write, 4 read, 6 both (default 6)',
        '  --order true|false     ordered topic (default false)',
        '  --cluster C            only the masters of cluster C',
        '  --broker ADDR          only this broker',
      ].join('\n'),
      async run(admin, v, out) {
        const t = need(v, 'topic');
        const args = {
          topic: t,
          readQueueNums: intOption('read-queues', stringOption(v, 'read-queues'), 8, 1, 65_535),
          writeQueueNums: intOption('write-queues', stringOption(v, 'write-queues'), 8, 1, 65_535),
          perm: perm(stringOption(v, 'perm')) ?? 6,
          order: bool('order', stringOption(v, 'order')) ?? false,
          clusterName: stringOption(v, 'cluster'),
          brokerAddr: stringOption(v, 'broker'),
        };
        const addrs = await admin.createOrUpdateTopic(args);
        out.emit(
          {
            topic: t,
            brokers: addrs,
            readQueueNums: args.readQueueNums,
            writeQueueNums: args.writeQueueNums,
            perm: args.perm,
            order: args.order,
          },
          () => {
            for (const a of addrs)
              out.line(
                `create topic ${t} on ${a}: ${args.readQueueNums} read / ${args.writeQueueNums} write queues, perm ${args.perm}, order ${args.order}`,
              );
          },
        );
      },
    },
    {
      name: 'update',
      summary: "change an existing topic's queue counts, perm or order on the brokers that have it",
      options: {
        topic: { type: 'string' },
        'read-queues': { type: 'string' },
        'write-queues': { type: 'string' },
        perm: { type: 'string' },
        order: { type: 'string' },
      },
      help: [
        '  --topic T              the topic (must exist)',
        '  --read-queues N        read queues per broker',
        '  --write-queues N       write queues per broker',
        '  --perm P               2 write, 4 read, 6 both',
        '  --order true|false     ordered topic',
      ].join('\n'),
      async run(admin, v, out) {
        const t = need(v, 'topic');
        const rq = stringOption(v, 'read-queues');
        const wq = stringOption(v, 'write-queues');
        const args = {
          topic: t,
          readQueueNums: rq === undefined ? undefined : intOption('read-queues', rq, 8, 1, 65_535),
          writeQueueNums: wq === undefined ? undefined : intOption('write-queues', wq, 8, 1, 65_535),
          perm: perm(stringOption(v, 'perm')),
          order: bool('order', stringOption(v, 'order')),
        };
        const addrs = await admin.updateTopic(args);
        const routes = await admin.topicRouteBrokers(t).catch(() => []);
        out.emit({ topic: t, brokers: addrs, route: routes }, () => {
          for (const a of addrs) out.line(`update topic ${t} on ${a}`);
        });
      },
    },
    updateStatic,
    {
      name: 'delete',
      summary: 'delete a topic from its brokers (or one cluster) and the name servers (mqadmin deleteTopic)',
      options: { topic: { type: 'string' }, cluster: { type: 'string' } },
      help: [
        '  --topic T        the topic',
        '  --cluster C      the masters of cluster C (default: the brokers of its route)',
      ].join('\n'),
      async run(admin, v, out) {
        const t = need(v, 'topic');
        const addrs = await admin.deleteTopic(t, stringOption(v, 'cluster'));
        out.emit({ topic: t, brokers: addrs }, () =>
          out.line(`delete topic ${t} from ${addrs.join(', ')} and the name server`),
        );
      },
    },
    topicPerm,
  ],
};
