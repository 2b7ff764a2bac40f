import createDebug from '../../debug.js';
import {
  Operations,
  RETRY_GROUP_TOPIC_PREFIX,
  ResponseCode,
  encodeLockBatchResponseBody,
  type HeartbeatData,
  type RemotingCommand,
  type SubscriptionData,
} from '../../../protocol/index.js';
import type { RemotingConnection, RemotingServer } from '../../remoting/index.js';
import { BROKER_VERSION } from '../broker-version.js';
import type { ClientChannelInfo } from '../consumer-manager.js';
import type { BrokerContext } from './broker-context.js';
import { callClient, fail, ok, registerOperation, type Answer } from './request-processor.js';
import { checkFilterConfig } from './sql-filter-checks.js';

const log = createDebug('rocketwire:broker');

/**
 * ClientManageProcessor: HEART_BEAT, UNREGISTER_CLIENT, CHECK_CLIENT_CONFIG, and the broker's own
 * NOTIFY_CONSUMER_IDS_CHANGED; plus LOCK_BATCH_MQ / UNLOCK_BATCH_MQ of orderly consumers (served
 * by AdminBrokerProcessor in Java) over the RebalanceLockManager.
 */
export class ClientManageProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  register(server: RemotingServer): void {
    registerOperation(server, Operations.HEART_BEAT, ({ body, request, conn }) => this.heartbeat(request, conn, body));
    registerOperation(server, Operations.UNREGISTER_CLIENT, ({ header, conn }) => {
      if (header.producerGroup) this.ctx.consumers.unregisterProducer(header.producerGroup, conn);
      if (header.consumerGroup) this.ctx.consumers.unregister(header.consumerGroup, conn);
      return ok();
    });
    registerOperation(server, Operations.CHECK_CLIENT_CONFIG, ({ body }) => {
      const tooMany = body.subscriptionData ? this.tooManyTags(body.subscriptionData, 'subscriptionData') : null;
      if (tooMany) return fail(ResponseCode.INVALID_PARAMETER, tooMany);
      const refused = body.subscriptionData ? checkFilterConfig(this.ctx, body.subscriptionData) : null;
      return refused ? fail(refused.code, refused.remark) : ok();
    });
    registerOperation(server, Operations.LOCK_BATCH_MQ, ({ body }) => {
      const granted = this.ctx.locks.tryLockBatch(body.consumerGroup, body.mqSet, body.clientId, this.ctx.clock.now());
      return ok({ body: encodeLockBatchResponseBody({ lockOKMQSet: granted }) });
    });
    registerOperation(server, Operations.UNLOCK_BATCH_MQ, ({ body }) => {
      this.ctx.locks.unlockBatch(body.consumerGroup, body.mqSet, body.clientId);
      return ok();
    });
  }

  /**
   * Register the client's consumer and producer groups. Subscriptions are kept as the client sent
   * them (Java's ConsumerManager.registerConsumer).
   *
   * Heartbeat V2 (5.x, ClientManageProcessor#heartBeatV2), when the heartbeat carries a non-zero
   * `heartbeatFingerprint`: each group remembers the fingerprint of its last heartbeat, and the
   * answer's IS_SUB_CHANGE says whether it differed (the client then sends the full data next
   * time); a heartbeat `withoutSub` refreshes the member and keeps the group's subscriptions.
   * Unlike Java's broker, a heartbeat without subscriptions for a group this broker does not know
   * (it restarted, or the group expired) is answered IS_SUB_CHANGE too, so that the client
   * sends them again instead of pulling without a subscription until something else changes.
   * A heartbeat without a fingerprint is V1: its subscriptions are taken as they are and the
   * answer says IS_SUB_CHANGE, as Java's.
   */
  private heartbeat(req: RemotingCommand, conn: RemotingConnection, data: HeartbeatData): Answer {
    const clientId = data.clientID;
    const now = this.ctx.clock.now();
    // checked before anything is registered: a refused heartbeat changes nothing
    for (const [i, cd] of data.consumerDataSet.entries()) {
      for (const [j, sd] of cd.subscriptionDataSet.entries()) {
        const tooMany = this.tooManyTags(sd, `consumerDataSet[${i}].subscriptionDataSet[${j}]`);
        if (tooMany) return fail(ResponseCode.INVALID_PARAMETER, tooMany);
      }
    }
    this.ctx.topics.ensureMany(
      data.consumerDataSet.map((cd) => RETRY_GROUP_TOPIC_PREFIX + cd.groupName),
      1,
    );
    const fingerprint = data.heartbeatFingerprint ?? 0;
    const v2 = fingerprint !== 0;
    const counts = this.ctx.consumers.heartbeats;
    if (v2 && data.withoutSub === true) counts.withoutSub++;
    else counts.full++;
    counts.bodyBytes += req.body?.length ?? 0;
    let subChange = !v2;
    for (const cd of data.consumerDataSet) {
      const group = cd.groupName;
      const channel: ClientChannelInfo = {
        conn,
        clientId,
        language: req.language,
        version: req.version,
        lastUpdate: now,
      };
      const known = this.ctx.consumers.find(group);
      if (v2 && known?.heartbeatFingerprint !== undefined && known.heartbeatFingerprint !== fingerprint)
        subChange = true;
      const keepSubs = v2 && data.withoutSub === true;
      if (keepSubs && known === undefined) subChange = true;
      this.ctx.consumers.register(
        group,
        channel,
        cd.consumeType,
        cd.messageModel,
        cd.consumeFromWhere,
        keepSubs ? null : cd.subscriptionDataSet,
      );
      const info = this.ctx.consumers.find(group);
      if (info) info.heartbeatFingerprint = fingerprint;
    }
    const client = { language: req.language ?? 'JAVA', version: req.version };
    for (const pd of data.producerDataSet)
      this.ctx.consumers.registerProducer(pd.groupName, conn, clientId, now, client);
    return { version: BROKER_VERSION, header: { isSupportHeartBeatV2: true, isSubChange: subChange } };
  }

  /**
   * A subscription a client built itself (tagsSet and codeSet travel in the body) with more tags
   * than maxTagsPerSubscription: the remark naming it, or null. Java bounds neither; every pull of
   * the group matches against the code set, and every registered one is kept in memory.
   */
  private tooManyTags(sd: SubscriptionData, path: string): string | null {
    const max = this.ctx.limits.maxTagsPerSubscription;
    const n = Math.max(sd.tagsSet.length, sd.codeSet.length);
    return n > max ? `${path} has ${n} tags, allowing at most ${max} (maxTagsPerSubscription)` : null;
  }

  /** NOTIFY_CONSUMER_IDS_CHANGED, oneway, to every live channel of the group (Broker2Client). */
  notifyConsumerIdsChanged(group: string, channels: ClientChannelInfo[]): void {
    const op = Operations.NOTIFY_CONSUMER_IDS_CHANGED;
    for (const ch of channels) {
      if (ch.conn.closed) continue;
      callClient(ch.conn, op, { consumerGroup: group }, null, { version: BROKER_VERSION, oneway: true }).catch(
        (err: Error) => log('notify %s of %s failed: %s', ch.clientId, group, err.message),
      );
    }
  }
}
