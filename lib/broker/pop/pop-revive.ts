import createDebug from '../../debug.js';
import { RETRY_GROUP_TOPIC_PREFIX, decodeMessage } from '../../../protocol/internal.js';
import { popRetryTopic } from '../../../protocol/pop-extra-info.js';
import type { MessageInner } from '../message-record.js';
import type { BrokerContext } from '../processor/broker-context.js';
import type { PopCheckpoint, PopCheckpointTable } from './pop-checkpoints.js';

const log = createDebug('rocketwire:broker:pop');

/** The retry copy of one popped message, or null when it cannot be read any more (dropped, logged). */
function retryMessage(ctx: BrokerContext, ck: PopCheckpoint, offset: number, target: string): MessageInner | null {
  const got = ctx.messageStore.getMessage(ck.topic, ck.queueId, offset, 1, null);
  const rec = got.status === 'FOUND' ? got.records[0] : undefined;
  if (!rec) {
    log('revive %s@%s queue %d offset %d: the message is gone', ck.topic, ck.group, ck.queueId, offset);
    return null;
  }
  const m = decodeMessage(rec, 0, { decompress: false });
  const props = { ...m.properties };
  delete props.POP_CK;
  if (m.reconsumeTimes === 0 || props['1ST_POP_TIME'] === undefined) props['1ST_POP_TIME'] = String(ck.popTime);
  return {
    topic: target,
    queueId: 0,
    flag: m.flag,
    sysFlag: m.sysFlag,
    bornTimestamp: m.bornTimestamp,
    bornHost: m.bornHost,
    reconsumeTimes: m.reconsumeTimes + 1,
    preparedTransactionOffset: 0,
    body: m.body,
    properties: props,
  };
}

/**
 * PopReviveService: every message of a checkpoint whose invisible time is over and that was not
 * acked goes to the pop retry topic (queue 0, reconsumeTimes + 1, 1ST_POP_TIME kept or set),
 * created with one queue; there is no DLQ step. A checkpoint of the retry topic itself is
 * revived into the same retry topic. A message that cannot be read any more is dropped.
 */
export function reviveCheckpoints(ctx: BrokerContext, checkpoints: PopCheckpointTable): number {
  let revived = 0;
  for (const ck of checkpoints.due(ctx.clock.now())) {
    const target = ck.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? ck.topic : popRetryTopic(ck.originTopic, ck.group);
    ctx.topics.ensure(target, 1);
    let failed = false;
    for (const offset of ck.offsets) {
      if (ck.acked.has(offset)) continue;
      const inner = retryMessage(ctx, ck, offset, target);
      if (inner) {
        const res = ctx.messageStore.putMessages([inner]);
        if (res.status !== 'PUT_OK') {
          // kept for the next scan (Apache backs off and tries again)
          failed = true;
          log('revive into %s failed: %s', target, res.remark ?? res.status);
          continue;
        }
        revived++;
      }
      // revived (or gone): never again for this checkpoint
      ck.acked.add(offset);
    }
    if (!failed) checkpoints.remove(ck);
  }
  return revived;
}
