import createDebug from '../debug.js';
import { ResponseCode, type TopicRouteData } from '../../protocol/index.js';
import { topicRouteToPublishQueues, type MQClientInstance } from '../client/index.js';
import { BrokerError } from '../remoting/index.js';
import { NoRouteError } from './errors.js';
import type { ResolvedProducerOptions } from './producer-options.js';
import { TopicPublishInfo } from './topic-publish-info.js';

const log = createDebug('rocketwire:producer');

/**
 * A producer's publish queues per topic (Java's topicPublishInfoTable): from the topic's route,
 * refreshed on a route change, or borrowed from the template topic (TBW102) for a topic the name
 * server does not know yet.
 */
export class PublishInfoTable {
  private readonly table = new Map<string, TopicPublishInfo>();

  constructor(private readonly options: Pick<ResolvedProducerOptions, 'createTopicKey' | 'defaultTopicQueueNums'>) {}

  /** A route change of a topic this producer sends to: its queues replaced. */
  onRouteChange(topic: string, route: TopicRouteData): void {
    if (!this.table.has(topic)) return;
    const queues = topicRouteToPublishQueues(topic, route);
    if (queues.length > 0) this.table.set(topic, new TopicPublishInfo(queues));
  }

  /** A topic this producer sends to, for the fault detector's probe. */
  anyTopic(): string | undefined {
    return this.table.keys().next().value;
  }

  /** The queues of `topic` when known and usable, without asking anyone (the send path's fast path). */
  cached(topic: string): TopicPublishInfo | null {
    const info = this.table.get(topic);
    return info?.ok ? info : null;
  }

  /** The queues to send `topic` to: cached, fetched, or borrowed from the template topic. */
  async find(instance: MQClientInstance, topic: string): Promise<TopicPublishInfo> {
    const cached = this.table.get(topic);
    if (cached?.ok) return cached;
    try {
      const route = await instance.getTopicRoute(topic, { refresh: cached !== undefined });
      const info = new TopicPublishInfo(topicRouteToPublishQueues(topic, route));
      // A topic the name server knows is never auto-created, even when none of its queues is writable now.
      if (!info.ok) throw new NoRouteError(topic, 'no writable queue on a broker with a master');
      this.table.set(topic, info);
      return info;
    } catch (err) {
      if (!(err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST)) throw err;
    }
    return this.autoCreate(instance, topic);
  }

  /**
   * The topic is unknown to the name server: borrow the brokers of the template topic (TBW102) with
   * min(defaultTopicQueueNums, template queues) queues each, as Java does; the broker creates the topic
   * on the first send, and the route refresh then replaces these queues with the real ones.
   */
  private async autoCreate(instance: MQClientInstance, topic: string): Promise<TopicPublishInfo> {
    const key = this.options.createTopicKey;
    let template: TopicRouteData;
    try {
      template = await instance.queryTopicRoute(key);
    } catch (err) {
      if (err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST) {
        throw new NoRouteError(topic, `the name server knows neither it nor the auto-create template ${key}`, {
          cause: err,
        });
      }
      throw err;
    }
    const n = this.options.defaultTopicQueueNums;
    const route: TopicRouteData = {
      ...template,
      queueDatas: template.queueDatas.map((q) => ({
        ...q,
        readQueueNums: Math.min(n, q.readQueueNums),
        writeQueueNums: Math.min(n, q.readQueueNums),
      })),
    };
    const info = new TopicPublishInfo(topicRouteToPublishQueues(topic, route), true);
    if (!info.ok) throw new NoRouteError(topic, `the template topic ${key} has no writable queue`);
    this.table.set(topic, info);
    instance.setTopicRoute(topic, route);
    log('topic %s unknown: sending through the %s template (%d queues)', topic, key, info.queues.length);
    return info;
  }
}
