import type { AdminCommandGroup } from './shared.js';

/** `rocketwire admin cluster`: mqadmin clusterList. */
export const cluster: AdminCommandGroup = {
  name: 'cluster',
  summary: 'brokers of every cluster: name, id, role, address, version (mqadmin clusterList)',
  subcommands: [
    {
      name: '',
      summary: 'list the brokers',
      options: {},
      help: '',
      async run(admin, _values, out) {
        const rows = await admin.cluster();
        out.emit(rows, () =>
          out.table(
            ['cluster', 'brokerName', 'brokerId', 'role', 'addr', 'version'],
            rows.map((r) => [r.clusterName, r.brokerName, String(r.brokerId), r.role, r.addr, r.version ?? '?']),
          ),
        );
      },
    },
  ],
};
