import { Operations, ResponseCode } from '../../../protocol/internal.js';
import { encodeBrokerStatsData, encodeGroupList } from '../../../protocol/body/broker-stats-bodies.js';
import type { RemotingServer } from '../../remoting/index.js';
import type { BrokerContext } from './broker-context.js';
import { fail, ok, registerOperation } from './request-processor.js';

/**
 * What mqadmin statsAll asks a broker (AdminBrokerProcessor of 5.3.3): VIEW_BROKER_STATS_DATA, one
 * item of the broker's stats (broker-stats.ts), and QUERY_TOPIC_CONSUME_BY_WHO, the groups that
 * consume a topic.
 */
export class BrokerStatsProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  register(server: RemotingServer): void {
    registerOperation(server, Operations.VIEW_BROKER_STATS_DATA, ({ header: h }) => {
      const data = this.ctx.messageStore.stats.view(h.statsName, h.statsKey);
      // Java's remark, word for word: mqadmin and DefaultMQAdminExt callers read it as "nothing counted"
      if (!data) return fail(ResponseCode.SYSTEM_ERROR, `The stats <${h.statsName}> <${h.statsKey}> not exist`);
      return ok({ body: encodeBrokerStatsData(data) });
    });
    registerOperation(server, Operations.QUERY_TOPIC_CONSUME_BY_WHO, ({ header: h }) => {
      // ConsumerManager.queryTopicConsumeByWho (online groups subscribing to it) plus
      // ConsumerOffsetManager.whichGroupByTopic (groups with offsets of it, online or not)
      const groups = this.ctx.offsets.groupsOf(h.topic);
      for (const [name, info] of this.ctx.consumers.groups) if (info.subscriptions.has(h.topic)) groups.add(name);
      return ok({ body: encodeGroupList({ groupList: [...groups].sort() }) });
    });
  }
}
