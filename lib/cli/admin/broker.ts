import { MQVersion } from '../../../protocol/index.js';
import { UsageError, stringOption } from '../common.js';
import { need, type AdminCommandGroup, type AdminOutput } from './shared.js';
import type { AdminTarget, WritePermResult } from '../../admin/index.js';

/** --broker / --cluster as an AdminTarget (neither: every master). */
export function targetOf(v: Record<string, unknown>): AdminTarget {
  const brokerAddr = typeof v.broker === 'string' ? v.broker : undefined;
  const clusterName = typeof v.cluster === 'string' ? v.cluster : undefined;
  if (brokerAddr !== undefined && clusterName !== undefined)
    throw new UsageError('give --broker or --cluster, not both');
  return { brokerAddr, clusterName };
}

export const TARGET_HELP = [
  '  --broker ADDR    only the broker at host:port',
  '  --cluster C      every master of cluster C (default: every master)',
].join('\n');

function writePerm(out: AdminOutput, verb: string, brokerName: string, r: WritePermResult[]): void {
  out.emit({ brokerName, nameServers: r }, () =>
    out.table(
      ['namesrvAddr', 'topics'],
      r.map((x) => [x.namesrvAddr, String(x.topicCount)]),
    ),
  );
  if (!out.json) out.line(`${verb} write perm of broker[${brokerName}] on ${r.length} name server(s)`);
}

/** `rocketwire admin broker config|update-config|wipe-write-perm|add-write-perm`. */
export const broker: AdminCommandGroup = {
  name: 'broker',
  summary: "a broker's config, and its write permission on the name servers",
  subcommands: [
    {
      name: 'config',
      summary: "every key and value of a broker's config (mqadmin getBrokerConfig)",
      options: { broker: { type: 'string' }, cluster: { type: 'string' }, key: { type: 'string' } },
      help: [
        '  --broker ADDR    the broker at host:port',
        '  --cluster C      every broker of cluster C, masters and slaves (default: every cluster)',
        '  --key K          only this key',
      ].join('\n'),
      async run(admin, v, out) {
        const key = stringOption(v, 'key');
        const all = await admin.brokerConfig(targetOf(v));
        const rows =
          key === undefined
            ? all
            : all.map((b) => ({ ...b, config: key in b.config ? { [key]: b.config[key]! } : {} }));
        out.emit(rows, () => {
          for (const b of rows) {
            out.line(`============${b.brokerId === 0 ? '' : 'Slave: '}${b.addr} (${b.brokerName})============`);
            for (const [k, val] of Object.entries(b.config)) out.line(`${k.padEnd(50)}=  ${val}`);
            out.line('');
          }
        });
      },
    },
    {
      name: 'update-config',
      summary: 'set one config key on brokers (mqadmin updateBrokerConfig)',
      options: {
        broker: { type: 'string' },
        cluster: { type: 'string' },
        key: { type: 'string' },
        value: { type: 'string' },
        'with-slaves': { type: 'boolean' },
      },
      help: [
        '  --key K          the config key',
        '  --value V        its new value',
        TARGET_HELP,
        '  --with-slaves    the slaves of the cluster too (mqadmin -a)',
      ].join('\n'),
      async run(admin, v, out) {
        const key = need(v, 'key');
        if (typeof v.value !== 'string') throw new UsageError('--value is required');
        const addrs = await admin.updateBrokerConfig(
          { [key]: v.value },
          { ...targetOf(v), includeSlaves: v['with-slaves'] === true },
        );
        out.emit({ key, value: v.value, brokers: addrs }, () => {
          for (const a of addrs) out.line(`update broker config success, ${a}`);
        });
      },
    },
    {
      name: 'wipe-write-perm',
      summary: "take write permission from a broker's routes on every name server (mqadmin wipeWritePerm)",
      options: { 'broker-name': { type: 'string' } },
      help: '  --broker-name N  the broker name (broker-a…)',
      async run(admin, v, out) {
        const name = need(v, 'broker-name');
        writePerm(out, 'wiped', name, await admin.wipeWritePerm(name));
      },
    },
    {
      name: 'add-write-perm',
      summary: "give a broker's routes read and write again on every name server (mqadmin addWritePerm)",
      options: { 'broker-name': { type: 'string' } },
      help: '  --broker-name N  the broker name (broker-a…)',
      async run(admin, v, out) {
        const name = need(v, 'broker-name');
        writePerm(out, 'added', name, await admin.addWritePerm(name));
      },
    },
  ],
};

/** A client's MQVersion ordinal by name where it is one we know ("V5_3_3"), as mqadmin prints it. */
function versionText(n: number): string {
  return Object.entries(MQVersion).find(([, x]) => x === n)?.[0] ?? String(n);
}

/** `rocketwire admin producer connection`. */
export const producer: AdminCommandGroup = {
  name: 'producer',
  summary: "a producer group's connections (mqadmin producerConnection)",
  subcommands: [
    {
      name: 'connection',
      summary: 'client id, address, language and version of each producer of the group online',
      options: { group: { type: 'string' }, topic: { type: 'string' } },
      help: [
        '  --group G        the producer group',
        '  --topic T        a topic it sends to (whose brokers are asked)',
      ].join('\n'),
      async run(admin, v, out) {
        const c = await admin.producerConnection(need(v, 'group'), need(v, 'topic'));
        out.emit(c, () =>
          out.table(
            ['#', 'clientId', 'clientAddr', 'language', 'version'],
            c.clients.map((x, i) => [
              String(i + 1).padStart(4, '0'),
              x.clientId,
              x.clientAddr,
              x.language,
              versionText(x.version),
            ]),
          ),
        );
      },
    },
  ],
};
