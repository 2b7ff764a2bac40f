import {
  RequestCode,
  checkGroupName,
  checkTopicName,
  type CheckClientRequestBody,
  type HeartbeatData,
  type LockBatchBody,
} from '../../protocol/internal.js';
import type { SubscriptionGroupConfig } from '../../protocol/body/admin-tools-bodies.js';
import type { AnyOperation } from '../../protocol/operation.js';

/**
 * The one check of topic and group names at the broker's (and the name server's) request
 * boundary: `operationProcessor` runs it on every request it decodes, for every request code,
 * before any handler sees the request. Topics name consume-queue folders and groups name their
 * `%RETRY%` / `%DLQ%` topics and consumerOffset.json keys, so a name such as `x/../T2` must never
 * reach the store. Topics follow TopicValidator, groups Validators.checkGroup
 * (protocol/resource-names.ts); Apache's broker checks topics only on send and topic creation and
 * groups nowhere but in develop's subscription-group auto-creation.
 */

/** Header fields that hold a topic name, in any operation's request header. */
export const TOPIC_HEADER_FIELDS: ReadonlySet<string> = new Set(['topic', 'defaultTopic', 'originTopic']);
/** Header fields that hold a group name. */
export const GROUP_HEADER_FIELDS: ReadonlySet<string> = new Set([
  'consumerGroup',
  'producerGroup',
  'group',
  'groupName',
  // CLONE_GROUP_OFFSET: the destination names consumerOffset.json keys
  'srcGroup',
  'destGroup',
]);

type Name = readonly [kind: 'topic' | 'group', path: string, value: unknown];

/** The names a request body carries, by request code (only bodies the broker or name server decodes). */
export const BODY_NAMES: Readonly<Partial<Record<number, (body: never) => Name[]>>> = {
  [RequestCode.HEART_BEAT]: (hb: HeartbeatData) => {
    const out: Name[] = [];
    for (const [i, cd] of hb.consumerDataSet.entries()) {
      out.push(['group', `consumerDataSet[${i}].groupName`, cd.groupName]);
      for (const [j, sd] of cd.subscriptionDataSet.entries())
        out.push(['topic', `consumerDataSet[${i}].subscriptionDataSet[${j}].topic`, sd.topic]);
    }
    for (const [i, pd] of hb.producerDataSet.entries())
      out.push(['group', `producerDataSet[${i}].groupName`, pd.groupName]);
    return out;
  },
  [RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP]: (c: SubscriptionGroupConfig) => [
    ['group', 'groupName', c.groupName],
  ],
  [RequestCode.LOCK_BATCH_MQ]: (b: LockBatchBody) => lockNames(b),
  [RequestCode.UNLOCK_BATCH_MQ]: (b: LockBatchBody) => lockNames(b),
  [RequestCode.CHECK_CLIENT_CONFIG]: (b: CheckClientRequestBody) => {
    const out: Name[] = [];
    // Java's client sends both; an absent one names nothing that could reach the store
    if (b.group != null) out.push(['group', 'group', b.group]);
    if (b.subscriptionData != null) out.push(['topic', 'subscriptionData.topic', b.subscriptionData.topic]);
    return out;
  },
};

function lockNames(b: LockBatchBody): Name[] {
  return [
    ['group', 'consumerGroup', b.consumerGroup],
    ...b.mqSet.map((mq, i): Name => ['topic', `mqSet[${i}].topic`, mq.topic]),
  ];
}

/**
 * Why the request's names are refused (the remark of an INVALID_PARAMETER answer, naming the field
 * and, as Java's validator does, the rule), or null when every name is valid. An optional header
 * field that is absent or empty names nothing.
 */
export function requestNameError(op: AnyOperation, header: Record<string, unknown>, body: unknown): string | null {
  for (const f of op.request.fields) {
    const kind = TOPIC_HEADER_FIELDS.has(f.name) ? 'topic' : GROUP_HEADER_FIELDS.has(f.name) ? 'group' : null;
    if (kind === null) continue;
    const v = header[f.name];
    if (!f.required && (v === undefined || v === null || v === '')) continue;
    const bad = kind === 'topic' ? checkTopicName(v) : checkGroupName(v);
    if (bad) return `${f.name}: ${bad}`;
  }
  const names = BODY_NAMES[op.code];
  if (names && body != null) {
    for (const [kind, path, v] of names(body as never)) {
      const bad = kind === 'topic' ? checkTopicName(v) : checkGroupName(v);
      if (bad) return `${path}: ${bad}`;
    }
  }
  return null;
}
