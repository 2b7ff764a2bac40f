import { ConsumerRunningInfoProp, MQVersion } from '../../../protocol/index.js';

/** A client's MQVersion ordinal by name where it is one we know ("V5_3_3"), as mqadmin prints it. */
function versionText(v: number): string {
  return Object.entries(MQVersion).find(([, n]) => n === v)?.[0] ?? String(v);
}

/** A TPS or RT figure with two decimals, as ConsumerRunningInfo.formatString prints them. */
function figure(v: unknown): string {
  return typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v ?? '');
}
import { UsageError, intOption, stringOption } from '../common.js';
import { need, timeText, type AdminCommandGroup } from './shared.js';
import { groupConsumeMode } from './operator-subcommands.js';

/** `rocketwire admin group list|progress|connection|status|create|delete`. */
export const group: AdminCommandGroup = {
  name: 'group',
  summary: 'consumer groups: list, progress (lag per queue), connection, status, create, delete',
  subcommands: [
    {
      name: 'list',
      summary: 'every subscription group of the masters (GET_ALL_SUBSCRIPTIONGROUP_CONFIG)',
      options: { cluster: { type: 'string' } },
      help: '  --cluster C      only the masters of cluster C',
      async run(admin, v, out) {
        const groups = await admin.groupList(stringOption(v, 'cluster'));
        out.emit(groups, () =>
          out.table(
            ['group', 'consumeEnable', 'broadcast', 'orderly', 'retryQueues', 'retryMaxTimes'],
            groups.map((g) => [
              g.groupName,
              String(g.consumeEnable),
              String(g.consumeBroadcastEnable),
              String(g.consumeMessageOrderly),
              String(g.retryQueueNums),
              String(g.retryMaxTimes),
            ]),
          ),
        );
      },
    },
    {
      name: 'progress',
      summary:
        'broker offset, consumer offset, lag and last consume time per queue, and the total lag (mqadmin consumerProgress)',
      options: { group: { type: 'string' }, topic: { type: 'string' } },
      help: ['  --group G        the consumer group', '  --topic T        only this topic'].join('\n'),
      async run(admin, v, out) {
        const p = await admin.consumerProgress(need(v, 'group'), stringOption(v, 'topic'));
        out.emit(p, () => {
          out.table(
            ['topic', 'brokerName', 'queueId', 'brokerOffset', 'consumerOffset', 'lag', 'lastConsumeTime'],
            p.queues.map((q) => [
              q.topic,
              q.brokerName,
              String(q.queueId),
              String(q.brokerOffset),
              String(q.consumerOffset),
              String(q.lag),
              timeText(q.lastTimestamp),
            ]),
          );
          out.line('');
          out.line(`Consume TPS: ${p.consumeTps.toFixed(2)}`);
          out.line(`Consume Diff Total: ${p.totalLag}`);
        });
      },
    },
    {
      name: 'connection',
      summary:
        "the group's online clients with language and version, and its subscriptions (mqadmin consumerConnection)",
      options: { group: { type: 'string' } },
      help: '  --group G        the consumer group',
      async run(admin, v, out) {
        const c = await admin.consumerConnection(need(v, 'group'));
        out.emit(c, () => {
          out.table(
            ['clientId', 'clientAddr', 'language', 'version'],
            c.clients.map((x) => [x.clientId, x.clientAddr, x.language, versionText(x.version)]),
          );
          out.line('');
          out.table(
            ['topic', 'subExpression'],
            Object.entries(c.subscriptionTable).map(([t, s]) => [t, s.subString]),
          );
          out.line('');
          out.line(`ConsumeType: ${c.consumeType ?? ''}`);
          out.line(`MessageModel: ${c.messageModel ?? ''}`);
          out.line(`ConsumeFromWhere: ${c.consumeFromWhere ?? ''}`);
        });
      },
    },
    {
      name: 'status',
      summary:
        "each online client's running info: type, version, start time, queues held and TPS (mqadmin consumerStatus)",
      options: { group: { type: 'string' }, client: { type: 'string' } },
      help: ['  --group G        the consumer group', '  --client ID      only this client id'].join('\n'),
      async run(admin, v, out) {
        const infos = await admin.consumerStatus(need(v, 'group'), stringOption(v, 'client'));
        out.emit(infos, () => {
          const P = ConsumerRunningInfoProp;
          out.table(
            ['clientId', 'consumeType', 'version', 'orderly', 'started', 'queues', 'subscriptions'],
            infos.map(({ clientId, info }) => [
              clientId,
              info.properties[P.PROP_CONSUME_TYPE] ?? '',
              info.properties[P.PROP_CLIENT_VERSION] ?? '',
              info.properties[P.PROP_CONSUME_ORDERLY] ?? '',
              timeText(Number(info.properties[P.PROP_CONSUMER_START_TIMESTAMP] ?? 0)),
              String(info.mqTable.length),
              String(info.subscriptionSet.length),
            ]),
          );
          for (const { clientId, info } of infos) {
            const status = Object.entries(info.statusTable);
            if (status.length === 0) continue;
            out.line('');
            out.line(`${clientId}:`);
            out.table(
              ['topic', 'pullRT', 'pullTPS', 'consumeRT', 'consumeOKTPS', 'consumeFailedTPS', 'consumeFailedMsgs'],
              status.map(([t, s]) => [
                t,
                ...['pullRT', 'pullTPS', 'consumeRT', 'consumeOKTPS', 'consumeFailedTPS', 'consumeFailedMsgs'].map(
                  (k) => figure(s[k]),
                ),
              ]),
            );
          }
        });
      },
    },
    {
      name: 'create',
      summary:
        'create or update a subscription group on every master, or one cluster or broker (mqadmin updateSubGroup)',
      options: {
        group: { type: 'string' },
        cluster: { type: 'string' },
        broker: { type: 'string' },
        'retry-queues': { type: 'string' },
        'retry-max-times': { type: 'string' },
        orderly: { type: 'boolean' },
        'no-broadcast': { type: 'boolean' },
        disable: { type: 'boolean' },
      },
      help: [
        '  --group G              the group',
        '  --cluster C            only the masters of cluster C',
        '  --broker ADDR          only this broker',
        '  --retry-queues N       retry queues (default 1)',
        '  --retry-max-times N    deliveries before the DLQ (default 16)',
        '  --orderly              consumeMessageOrderly',
        '  --no-broadcast         consumeBroadcastEnable false',
        '  --disable              consumeEnable false',
      ].join('\n'),
      async run(admin, v, out) {
        const g = need(v, 'group');
        const fields = {
          retryQueueNums: intOption('retry-queues', stringOption(v, 'retry-queues'), 1, 0, 1024),
          retryMaxTimes: intOption('retry-max-times', stringOption(v, 'retry-max-times'), 16, -1, 1_000_000),
          consumeMessageOrderly: v.orderly === true,
          consumeBroadcastEnable: v['no-broadcast'] !== true,
          consumeEnable: v.disable !== true,
        };
        const target: { clusterName?: string; brokerAddr?: string } = {};
        const c = stringOption(v, 'cluster');
        const b = stringOption(v, 'broker');
        if (c !== undefined && b !== undefined) throw new UsageError('give --cluster or --broker, not both');
        if (c !== undefined) target.clusterName = c;
        if (b !== undefined) target.brokerAddr = b;
        const addrs = await admin.createGroup(g, fields, target);
        out.emit({ group: g, brokers: addrs, ...fields }, () => {
          for (const a of addrs) out.line(`create subscription group ${g} on ${a}`);
        });
      },
    },
    {
      name: 'delete',
      summary:
        'delete a subscription group from every master (and its %RETRY% and %DLQ% topics) (mqadmin deleteSubGroup)',
      options: { group: { type: 'string' }, cluster: { type: 'string' }, 'clean-offset': { type: 'boolean' } },
      help: [
        '  --group G        the group',
        '  --cluster C      only the masters of cluster C',
        '  --clean-offset   also drop its committed offsets',
      ].join('\n'),
      async run(admin, v, out) {
        const g = need(v, 'group');
        const opts: { cleanOffset?: boolean; clusterName?: string } = { cleanOffset: v['clean-offset'] === true };
        const c = stringOption(v, 'cluster');
        if (c !== undefined) opts.clusterName = c;
        const addrs = await admin.deleteGroup(g, opts);
        out.emit({ group: g, brokers: addrs }, () =>
          out.line(`delete subscription group ${g} from ${addrs.join(', ')}`),
        );
      },
    },
    groupConsumeMode,
  ],
};
