import t from 'tap';
import { flowControlReason, queueLimitsFromTopic, tagMatches } from '../../lib/consumer/index.js';
import { buildSubscriptionData } from '../../protocol/index.js';

const limits = {
  pullThresholdForQueue: 1000,
  pullThresholdSizeForQueueMiB: 100,
  consumeConcurrentlyMaxSpan: 2000,
  orderly: false,
};

t.test('flow control: count, whole MiB, span (concurrent only)', async (t) => {
  t.equal(flowControlReason({ msgCount: 1000, msgSize: 0, maxSpan: 0 }, limits), null, 'at the limit is fine');
  t.equal(flowControlReason({ msgCount: 1001, msgSize: 0, maxSpan: 0 }, limits), 'count');
  t.equal(
    flowControlReason({ msgCount: 1, msgSize: 101 * 1024 * 1024 - 1, maxSpan: 0 }, limits),
    null,
    '100.99 MiB is 100 whole MiB',
  );
  t.equal(flowControlReason({ msgCount: 1, msgSize: 101 * 1024 * 1024, maxSpan: 0 }, limits), 'size');
  t.equal(flowControlReason({ msgCount: 2, msgSize: 2, maxSpan: 2001 }, limits), 'span');
  t.equal(
    flowControlReason({ msgCount: 2, msgSize: 2, maxSpan: 2001 }, { ...limits, orderly: true }),
    null,
    'orderly ignores span',
  );
});

t.test('topic thresholds divide among held queues, at least 1', async (t) => {
  const q = { pullThresholdForQueue: 1000, pullThresholdSizeForQueueMiB: 100 };
  t.same(queueLimitsFromTopic(q, { pullThresholdForTopic: -1, pullThresholdSizeForTopicMiB: -1 }, 8), q);
  t.same(queueLimitsFromTopic(q, { pullThresholdForTopic: 100, pullThresholdSizeForTopicMiB: 10 }, 8), {
    pullThresholdForQueue: 12,
    pullThresholdSizeForQueueMiB: 1,
  });
  t.same(queueLimitsFromTopic(q, { pullThresholdForTopic: 3, pullThresholdSizeForTopicMiB: 3 }, 8), {
    pullThresholdForQueue: 1,
    pullThresholdSizeForQueueMiB: 1,
  });
});

t.test('subscription expressions and client-side tag re-check', async (t) => {
  const s = buildSubscriptionData('T', ' TagA || TagB ||  || TagA', 7);
  t.same(s, {
    classFilterMode: false,
    codeSet: [2598919, 2598920],
    expressionType: 'TAG',
    subString: ' TagA || TagB ||  || TagA',
    subVersion: 7,
    tagsSet: ['TagA', 'TagB'],
    topic: 'T',
  });
  t.same(buildSubscriptionData('T', '*', 1).tagsSet, []);
  t.equal(buildSubscriptionData('T', '', 1).subString, '*');
  t.ok(tagMatches(s, 'TagB'));
  t.notOk(tagMatches(s, 'TagC'));
  t.notOk(tagMatches(s, undefined), 'no TAGS property: dropped when tags are listed');
  t.ok(tagMatches(buildSubscriptionData('T', '*', 1), undefined));
});
