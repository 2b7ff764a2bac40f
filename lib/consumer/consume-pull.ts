import createDebug from 'debug';
import { buildPullSysFlag, decodeMessagesSkipping, ResponseCode, type MessageExt, type SubscriptionData, type UndecodableRecord } from '../../protocol/index.js';
import type { PullResult } from '../client/index.js';
import { BrokerError } from '../remoting/index.js';
import { UndecodableMessageError } from './consumer-events.js';
import { BrokerAddressNotFoundError } from './errors.js';
import {
  flowControlReason,
  PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL,
  PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL,
  PULL_TIME_DELAY_MILLS_WHEN_SUSPEND,
} from './flow-control.js';
import type { ProcessQueue } from './process-queue.js';
import type { PushConsumerImpl } from './push-consumer-impl.js';
import type { PullRequest } from './pull-request.js';
import { tagMatches } from './subscription.js';

const log = createDebug('rocketwire:consumer');

// The push consumer's pull path (§9.6, DefaultMQPushConsumerImpl.pullMessage and its PullCallback):
// flow control, the PULL_MESSAGE request, and what each pull status does to the queue.

export function pullMessage(impl: PushConsumerImpl, pr: PullRequest): void {
  const pq = pr.processQueue;
  if (pq.dropped) return;
  const { config } = impl;
  pq.markPulled(config.clock.now());
  if (impl.state !== 'RUNNING' || impl.paused) {
    impl.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND);
    return;
  }
  const reason = flowControlReason(pq, impl.limits);
  if (reason !== null) {
    pr.flowControlPauses[reason]++;
    impl.recorder.flowControl[reason]++;
    impl.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL);
    return;
  }
  const sub = impl.subscriptionInner.get(pr.messageQueue.topic);
  if (!sub) {
    impl.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND);
    return;
  }
  const p = doPull(impl, pr, sub);
  impl.inflightPulls.add(p);
  p.then(() => impl.inflightPulls.delete(p));
}

async function doPull(impl: PushConsumerImpl, pr: PullRequest, sub: SubscriptionData): Promise<void> {
  const { config } = impl;
  const instance = impl.instance!;
  const mq = pr.messageQueue;
  const pq = pr.processQueue;
  let addr: string | undefined;
  try {
    if (config.orderly) {
      if (config.messageModel === 'CLUSTERING' && !pq.locked) {
        impl.pullService.executePullRequestLater(pr, config.pullTimeDelayMillsWhenException);
        return;
      }
      if (!pr.previouslyLocked) {
        // First pull since the lock was granted: start from the broker's committed offset (§9.6 step 5).
        const offset = await impl.computePullFromWhere(mq);
        if (offset < 0) {
          impl.pullService.executePullRequestLater(pr, config.pullTimeDelayMillsWhenException);
          return;
        }
        pr.previouslyLocked = true;
        pr.nextOffset = offset;
      }
    }
    let commitOffset = -1;
    if (config.messageModel === 'CLUSTERING') commitOffset = impl.offsetStore.readMemory(mq);
    let target = instance.findBrokerAddressInSubscribe(mq.brokerName, pr.suggestWhichBrokerId);
    if (!target) {
      await instance.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
      target = instance.findBrokerAddressInSubscribe(mq.brokerName, pr.suggestWhichBrokerId);
    }
    if (!target) throw new BrokerAddressNotFoundError(mq.brokerName);
    addr = target.addr;
    // FLAG_SUSPEND always; FLAG_COMMIT_OFFSET only with an in-memory offset > 0 and never towards a slave.
    // Java 4.9 sends FLAG_SUBSCRIPTION only with postSubscriptionWhenPull (default off, not offered here).
    const sysFlag = buildPullSysFlag(commitOffset > 0 && !target.slave, true, false);
    const result = await instance.pullMessage(
      target.addr,
      {
        consumerGroup: config.consumerGroup,
        topic: mq.topic,
        queueId: mq.queueId,
        queueOffset: pr.nextOffset,
        maxMsgNums: config.pullBatchSize,
        sysFlag,
        commitOffset,
        suspendTimeoutMillis: config.brokerSuspendMaxTimeMs,
        subVersion: sub.subVersion,
        expressionType: 'TAG',
        bname: mq.brokerName,
      },
      config.pullTimeoutMs,
      impl.pullService.signal,
    );
    impl.events.brokerAnswered(mq.brokerName, target.addr, 'PULL_MESSAGE');
    if (pq.dropped) return;
    onPullResult(impl, pr, sub, result);
  } catch (err) {
    if (impl.pullService.signal.aborted || pq.dropped) return;
    impl.recorder.pullErrors++;
    impl.events.brokerFailed(mq.brokerName, addr, 'PULL_MESSAGE', err);
    const flowControl = err instanceof BrokerError && err.code === ResponseCode.FLOW_CONTROL;
    log('pull %o failed: %s', mq, (err as Error)?.message ?? err);
    impl.pullService.executePullRequestLater(
      pr,
      flowControl ? PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL : config.pullTimeDelayMillsWhenException,
    );
  }
}

function onPullResult(impl: PushConsumerImpl, pr: PullRequest, sub: SubscriptionData, result: PullResult): void {
  const { config } = impl;
  const mq = pr.messageQueue;
  const pq = pr.processQueue;
  const now = config.clock.now();
  impl.recorder.pulls.add(1, now);
  pr.suggestWhichBrokerId = result.suggestWhichBrokerId;
  switch (result.status) {
    case 'FOUND': {
      impl.recorder.pullsFound++;
      // Records that cannot be decoded are skipped and reported, never retried: a pull that failed
      // on them would come back with the same bytes forever (see UndecodableMessageError).
      let all: MessageExt[];
      let undecodable: UndecodableRecord[] = [];
      if (result.bodyBytes) ({ messages: all, undecodable } = decodeMessagesSkipping(result.bodyBytes));
      else all = result.messages;
      if (undecodable.length > 0) {
        reportUndecodable(impl, pr, all, undecodable);
        // Skipped records after the last decoded one: nothing consumed will ever carry the committed
        // offset past them, so it moves to nextBeginOffset once everything before them is consumed.
        if (undecodable[undecodable.length - 1]!.messagesBefore === all.length) skippedTail.set(pq, result.nextBeginOffset);
      }
      pr.nextOffset = result.nextBeginOffset;
      let msgs = all;
      if (sub.tagsSet.length > 0) msgs = all.filter((m) => tagMatches(sub, m.tags ?? m.properties.TAGS));
      if (msgs.length === 0) {
        // Nothing to hand over because all of it was undecodable: move the committed offset past it.
        if (undecodable.length > 0 && pq.msgCount === 0) impl.offsetStore.updateOffset(mq, pr.nextOffset, true);
        impl.pullService.executePullRequestImmediately(pr);
        return;
      }
      const minText = String(result.minOffset);
      const maxText = String(result.maxOffset);
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        const props = m.properties;
        props.MIN_OFFSET = minText;
        props.MAX_OFFSET = maxText;
        m.brokerName = mq.brokerName;
      }
      impl.recorder.pulledMessages.add(msgs.length, now);
      const dispatchToConsume = pq.putMessage(msgs);
      if (impl.concurrently) impl.concurrently.submitConsumeRequest(msgs, pq, mq);
      else impl.orderlyService!.submitConsumeRequest(msgs, pq, mq, dispatchToConsume);
      if (config.pullIntervalMs > 0) impl.pullService.executePullRequestLater(pr, config.pullIntervalMs);
      else impl.pullService.executePullRequestImmediately(pr);
      return;
    }
    case 'NO_NEW_MSG':
    case 'NO_MATCHED_MSG':
      pr.nextOffset = result.nextBeginOffset;
      // Nothing cached: commit the filtered/empty range too (correctTagsOffset).
      if (pq.msgCount === 0) impl.offsetStore.updateOffset(mq, pr.nextOffset, true);
      impl.pullService.executePullRequestImmediately(pr);
      return;
    case 'OFFSET_ILLEGAL':
      log('pull %o: offset %d illegal, broker suggests %d', mq, pr.nextOffset, result.nextBeginOffset);
      pr.nextOffset = result.nextBeginOffset;
      impl.rebalance.dropProcessQueue(pq);
      // 5.2+: freeze the corrected offset, persist it, drop the queue and rebalance at once.
      impl.offsetStore.updateAndFreezeOffset(mq, pr.nextOffset);
      {
        // Tracked with the pulls so shutdown waits for it.
        const p = (async () => {
          await impl.offsetStore.persist(mq);
          await impl.rebalance.removeProcessQueue(mq);
          impl.doRebalance();
        })().catch((err: unknown) => log('OFFSET_ILLEGAL handling of %o failed: %s', mq, (err as Error).message));
        impl.inflightPulls.add(p);
        p.then(() => impl.inflightPulls.delete(p));
      }
      return;
  }
}

/** Offset past undecodable records that ended a pull, per queue, committed when its cache drains. */
const skippedTail = new WeakMap<ProcessQueue, number>();

/** The cache drained: commit past the undecodable records that ended the last pull, if any. */
function commitSkippedTail(impl: PushConsumerImpl, pq: ProcessQueue): void {
  const offset = skippedTail.get(pq);
  if (offset === undefined || pq.msgCount > 0) return;
  skippedTail.delete(pq);
  const pr = pq.pullRequest;
  if (!pq.dropped && pr !== null) impl.offsetStore.updateOffset(pr.messageQueue, offset, true);
}

/** One 'undecodable' event per skipped record, located by its own header or by its neighbours. */
function reportUndecodable(impl: PushConsumerImpl, pr: PullRequest, decoded: MessageExt[], skipped: UndecodableRecord[]): void {
  const mq = pr.messageQueue;
  for (const u of skipped) {
    const before = u.messagesBefore > 0 ? decoded[u.messagesBefore - 1]!.queueOffset + 1 : pr.nextOffset;
    const exact = u.recordIntact && u.queueOffset !== undefined;
    const err = new UndecodableMessageError({
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      queueOffset: exact ? u.queueOffset! : before,
      physOffset: u.commitLogOffset,
      recordIntact: exact,
      bytes: u.length,
      reason: u.reason,
    });
    log('%s', err.message);
    impl.events.undecodable(err);
  }
}

/** ConsumeHost: a consume call removed messages; resume a pull parked by flow control once below the limits. */
export function onConsumed(impl: PushConsumerImpl, pq: ProcessQueue): void {
  commitSkippedTail(impl, pq);
  const pr = pq.pullRequest;
  // Cheap check first: only a parked pull is worth re-evaluating.
  if (pr !== null && pr.parkTimer !== null && !pq.dropped && flowControlReason(pq, impl.limits) === null) impl.pullService.resume(pr);
}
