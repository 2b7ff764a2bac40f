import { Operations, ResponseCode, decodeRecallHandle, encodeRecallHandle } from '../../../protocol/internal.js';
import type { RemotingServer } from '../../remoting/index.js';
import { socketAddressText, type MessageInner } from '../message-record.js';
import { timerHook } from '../timer/timer-hook.js';
import { DEFAULT_REGION_ID } from '../trace-topic.js';
import type { BrokerContext } from './broker-context.js';
import { fail, registerOperation, type Answer } from './request-processor.js';

/** The embedded broker's recall option (BrokerTuning extends it). */
export interface RecallOptions {
  /**
   * Serve RECALL_MESSAGE (Java's BrokerConfig recallMessageEnable); off, a recall is answered
   * NO_PERMISSION "recall failed, operation is forbidden", as by Apache's broker.
   * @default false (Apache's)
   */
  recallMessageEnable?: boolean;
}

/** The tag of a delete marker (RecallMessageProcessor.RECALL_MESSAGE_TAG). */
const RECALL_MESSAGE_TAG = '_RECALL_TAG_';

/** TimerMessageStore#buildDeleteKey: the key a delete marker names its timer by. */
export function timerDeleteKey(realTopic: string, uniqKey: string): string {
  return `${realTopic}+${uniqKey}`;
}

/**
 * SendMessageProcessor#attachRecallHandle: the recall handle of a message the timer hook just
 * parked (TIMER_OUT_MS and REAL_TOPIC set, not a retry topic), for a single send's answer; the
 * timestamp is TIMER_OUT_MS + 1.
 */
export function recallHandleFor(properties: Readonly<Record<string, string>>, brokerName: string): string | undefined {
  const out = properties.TIMER_OUT_MS;
  const topic = properties.REAL_TOPIC;
  if (out === undefined || topic === undefined || topic.startsWith('%RETRY%') || !properties.UNIQ_KEY) return undefined;
  return encodeRecallHandle({
    topic,
    brokerName,
    timestamp: String(Number(out) + 1),
    messageId: properties.UNIQ_KEY,
  });
}

/**
 * RecallMessageProcessor (RECALL_MESSAGE 370, 5.x): checks the request as Apache's broker does, in
 * its order and with its codes and remarks, then writes a delete marker: a timer message to the
 * handle's topic, due at the handle's time, tagged `_RECALL_TAG_`, carrying TIMER_DEL_UNIQKEY =
 * `topic+uniqKey` and the recalled message's UNIQ_KEY. The timer store drops the timer the marker
 * names when it comes due, and never delivers the marker. As in Apache, the handle is not checked
 * against the store: a well-formed handle of a message that never existed is answered SUCCESS.
 */
export class RecallMessageProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly recallMessageEnable: boolean,
    private readonly onRecall: (deleteKey: string) => void,
  ) {}

  register(server: RemotingServer): void {
    registerOperation(server, Operations.RECALL_MESSAGE, ({ header, conn }) =>
      this.recall(header.topic, header.recallHandle, header.producerGroup, socketAddressText(conn.remoteAddress)),
    );
  }

  private recall(topic: string, recallHandle: string, producerGroup: string | undefined, bornHost: string): Answer {
    if (!this.recallMessageEnable) return fail(ResponseCode.NO_PERMISSION, 'recall failed, operation is forbidden');
    if (!this.ctx.topics.get(topic))
      return fail(ResponseCode.TOPIC_NOT_EXIST, `recall failed, the topic[${topic}] not exist`);
    const handle = decodeRecallHandle(recallHandle);
    if (!handle) return fail(ResponseCode.ILLEGAL_OPERATION, 'recall handle is invalid');
    if (handle.topic !== topic) return fail(ResponseCode.ILLEGAL_OPERATION, 'recall failed, topic not match');
    if (handle.brokerName !== this.ctx.brokerName)
      return fail(ResponseCode.ILLEGAL_OPERATION, 'recall failed, broker service not available');
    // NumberUtils.toLong(…, -1): anything but a plain long is -1, which is in the past
    const timestamp = /^[+-]?\d{1,18}$/.test(handle.timestamp) ? Number(handle.timestamp) : -1;
    const now = this.ctx.clock.now();
    const timeLeft = timestamp - now;
    if (timeLeft <= 0 || timeLeft >= this.ctx.timerSettings.timerMaxDelaySec * 1000)
      return fail(ResponseCode.ILLEGAL_OPERATION, 'recall failed, timestamp invalid');

    const deleteKey = timerDeleteKey(handle.topic, handle.messageId);
    const properties: Record<string, string> = {
      TAGS: RECALL_MESSAGE_TAG,
      TIMER_DEL_UNIQKEY: deleteKey,
      UNIQ_KEY: handle.messageId,
      TIMER_DELIVER_MS: handle.timestamp,
      BORN_TIMESTAMP: String(now),
      TRACE_CONTEXT: '',
    };
    if (producerGroup !== undefined) properties.PGROUP = producerGroup;
    const marker: MessageInner = {
      topic: handle.topic,
      queueId: 0,
      flag: 0,
      sysFlag: 0,
      bornTimestamp: now,
      bornHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
      body: Buffer.from('0'),
      properties,
    };
    const refused = timerHook(marker, this.ctx.timerSettings, now);
    const result = refused ?? this.ctx.messageStore.putMessages([marker]);
    if (result.status !== 'PUT_OK') return fail(ResponseCode.SYSTEM_ERROR, 'recall failed, execute error');
    this.onRecall(deleteKey);
    return { header: { msgId: handle.messageId, MSG_REGION: DEFAULT_REGION_ID } };
  }
}
