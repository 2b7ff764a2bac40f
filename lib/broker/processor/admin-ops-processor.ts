import { Operations, ResponseCode, encodeProducerConnection } from '../../../protocol/internal.js';
import type { RemotingServer } from '../../remoting/index.js';
import { BrokerConfigTable } from '../broker-config-table.js';
import type { BrokerContext } from './broker-context.js';
import { fail, ok, registerOperation, type Answer } from './request-processor.js';

/**
 * The operator requests of AdminBrokerProcessor beside mqadmin's reads: the broker config (GET /
 * UPDATE_BROKER_CONFIG over broker-config-table.ts), the producers of a group
 * (GET_PRODUCER_CONNECTION_LIST) and the broker-side offset clone (CLONE_GROUP_OFFSET).
 */
export class AdminOpsProcessor {
  private table: BrokerConfigTable | null = null;

  /** `entries`: the broker's settings, asked on the first config request (the address is known once listening). */
  constructor(
    private readonly ctx: BrokerContext,
    private readonly entries: () => Record<string, string>,
  ) {}

  private config(): BrokerConfigTable {
    this.table ??= new BrokerConfigTable(this.entries(), this.ctx.clock);
    return this.table;
  }

  register(server: RemotingServer): void {
    registerOperation(server, Operations.GET_BROKER_CONFIG, () => {
      const table = this.config();
      return { header: { version: table.dataVersionJson() }, body: table.all() };
    });
    registerOperation(server, Operations.UPDATE_BROKER_CONFIG, ({ body }) => {
      const table = this.config();
      // Java refuses the whole update when one key is on the black list, and says no more
      if (table.blackListed(body) !== undefined)
        return fail(ResponseCode.NO_PERMISSION, 'Can not update config in black list.');
      table.update(body);
      return ok();
    });
    registerOperation(server, Operations.GET_PRODUCER_CONNECTION_LIST, ({ header: h }) => {
      const m = this.ctx.consumers.producerGroups.get(h.producerGroup);
      if (!m) return fail(ResponseCode.SYSTEM_ERROR, `the producer group[${h.producerGroup}] not exist`);
      return ok({
        body: encodeProducerConnection({
          connectionSet: [...m].map(([conn, p]) => ({
            clientId: p.clientId,
            clientAddr: conn.remoteAddress,
            language: p.language,
            version: p.version,
          })),
        }),
      });
    });
    registerOperation(server, Operations.CLONE_GROUP_OFFSET, ({ header: h }) =>
      this.cloneOffsets(h.srcGroup, h.destGroup, h.topic, h.offline),
    );
  }

  /**
   * AdminBrokerProcessor#cloneGroupOffset: the source group's committed offsets of the topic (of
   * every topic it has offsets of when none is named) copied over the destination group's; with
   * `offline` false, a topic the source group has consumers online for but does not subscribe to
   * is left out. Java answers SUCCESS whatever was copied.
   */
  private cloneOffsets(src: string, dest: string, topic: string | undefined, offline: boolean): Answer {
    const offsets = this.ctx.offsets.groupOffsets(src);
    const topics = topic !== undefined && topic.trim() !== '' ? [topic] : [...offsets.keys()];
    const online = this.ctx.consumers.find(src);
    for (const t of topics) {
      if (!this.ctx.topics.get(t)) continue;
      if (!offline && online && online.subscriptions.size > 0 && !online.subscriptions.has(t)) continue;
      for (const [queueId, offset] of offsets.get(t) ?? []) this.ctx.offsets.commit(dest, t, queueId, offset);
    }
    return ok();
  }
}
