import {
  Operations,
  ResponseCode,
  encodeConsumerListBody,
  type QueryConsumerOffsetRequestHeader,
} from '../../../protocol/index.js';
import type { RemotingServer } from '../../remoting/index.js';
import type { BrokerContext } from './broker-context.js';
import { fail, ok, registerOperation, type Answer } from './request-processor.js';

/** ConsumerManageProcessor: QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, GET_CONSUMER_LIST_BY_GROUP. */
export class ConsumerManageProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  register(server: RemotingServer): void {
    registerOperation(server, Operations.QUERY_CONSUMER_OFFSET, ({ header }) => this.queryConsumerOffset(header));
    registerOperation(server, Operations.UPDATE_CONSUMER_OFFSET, ({ header }) => {
      const { consumerGroup, topic, queueId } = header;
      // as develop's ConsumerManageProcessor#updateConsumerOffset: an unknown topic is refused (it
      // has no subscription groups to check); the queueId, which Java does not check, must be one
      // of the topic's, or any peer could fill consumerOffset.json with queues that do not exist
      const config = this.ctx.topics.get(topic);
      if (!config) return fail(ResponseCode.TOPIC_NOT_EXIST, `Topic ${topic} not exist!`);
      const queues = Math.max(config.readQueueNums, config.writeQueueNums);
      if (queueId < 0 || queueId >= queues)
        return fail(
          ResponseCode.INVALID_PARAMETER,
          `queueId ${queueId} is out of range, topic ${topic} has queues 0 to ${queues - 1}`,
        );
      this.ctx.offsets.commit(consumerGroup, topic, queueId, header.commitOffset);
      return ok();
    });
    registerOperation(server, Operations.GET_CONSUMER_LIST_BY_GROUP, ({ header }) => {
      const group = header.consumerGroup;
      const ids = this.ctx.consumers.find(group)?.clientIds() ?? [];
      if (ids.length === 0) return fail(ResponseCode.SYSTEM_ERROR, `no consumer for this group, ${group}`);
      return ok({ body: encodeConsumerListBody({ consumerIdList: ids }) });
    });
  }

  private queryConsumerOffset(h: QueryConsumerOffsetRequestHeader): Answer {
    const { consumerGroup, topic, queueId } = h;
    const store = this.ctx.messageStore;
    const stored = this.ctx.offsets.query(consumerGroup, topic, queueId);
    if (stored !== undefined && stored >= 0) return { header: { offset: stored } };
    // Java: a missing setZeroIfNotFound means true
    const zeroAllowed = h.setZeroIfNotFound ?? true;
    // a young queue (first message still in memory) is read from its start: answer 0 (4.9/5.x)
    if (
      zeroAllowed &&
      store.getMinOffset(topic, queueId) <= 0 &&
      store.getMaxOffset(topic, queueId) > 0 &&
      store.isInMemory(topic, queueId, 0)
    ) {
      return { header: { offset: 0 } };
    }
    return fail(ResponseCode.QUERY_NOT_FOUND, 'Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first');
  }
}
