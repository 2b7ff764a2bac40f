import t from 'tap';
import {
  ConsumerOptionError,
  consumerDefaults,
  effectiveMaxReconsumeTimes,
  resolveConsumerOptions,
} from '../../lib/consumer/index.js';

const base = { consumerGroup: 'cg1', namesrvAddr: '127.0.0.1:9876' };

t.test("defaults are Java's", async (t) => {
  const c = resolveConsumerOptions(base);
  t.match(c, {
    messageModel: 'CLUSTERING',
    consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
    pullBatchSize: 32,
    consumeMessageBatchMaxSize: 1,
    consumeThreadMin: 20,
    consumeThreadMax: 20,
    pullThresholdForQueue: 1000,
    pullThresholdSizeForQueueMiB: 100,
    pullThresholdForTopic: -1,
    pullThresholdSizeForTopicMiB: -1,
    consumeConcurrentlyMaxSpan: 2000,
    pullIntervalMs: 0,
    maxReconsumeTimes: -1,
    consumeTimeoutMs: 15 * 60_000,
    suspendCurrentQueueTimeMillis: 1000,
    persistOffsetIntervalMs: 5000,
    rebalanceIntervalMs: 20000,
    pullTimeoutMs: 30000,
    brokerSuspendMaxTimeMs: 15000,
    awaitTerminationMillisWhenShutdown: 0,
  });
  t.equal(c.allocateStrategy.name, 'AVG');
  t.equal(effectiveMaxReconsumeTimes(c), 16);
  t.equal(effectiveMaxReconsumeTimes({ ...c, orderly: true }), 2147483647);
  t.not(consumerDefaults(), consumerDefaults(), 'a fresh object each time');
});

t.test('short names and Java names of consumeFromWhere', async (t) => {
  t.equal(resolveConsumerOptions({ ...base, consumeFromWhere: 'first' }).consumeFromWhere, 'CONSUME_FROM_FIRST_OFFSET');
  t.equal(
    resolveConsumerOptions({ ...base, consumeFromWhere: 'timestamp', consumeTimestampMs: 5 }).consumeTimestampMs,
    5,
  );
  t.equal(
    resolveConsumerOptions({ ...base, consumeFromWhere: 'CONSUME_FROM_MAX_OFFSET' }).consumeFromWhere,
    'CONSUME_FROM_MAX_OFFSET',
  );
});

t.test('out-of-range options are rejected naming the option', async (t) => {
  const bad: [Record<string, unknown>, string][] = [
    [{ consumerGroup: '' }, 'consumerGroup'],
    [{ consumerGroup: 'a b' }, 'consumerGroup'],
    [{ consumerGroup: 'DEFAULT_CONSUMER' }, 'consumerGroup'],
    [{ namesrvAddr: '' }, 'namesrvAddr'],
    [{ pullBatchSize: 0 }, 'pullBatchSize'],
    [{ pullBatchSize: 1025 }, 'pullBatchSize'],
    [{ consumeMessageBatchMaxSize: 1025 }, 'consumeMessageBatchMaxSize'],
    [{ consumeThreadMin: 0 }, 'consumeThreadMin'],
    [{ consumeThreadMax: 1001 }, 'consumeThreadMax'],
    [{ consumeThreadMin: 30, consumeThreadMax: 10 }, 'consumeThreadMin'],
    [{ pullThresholdForQueue: 65536 }, 'pullThresholdForQueue'],
    [{ pullThresholdSizeForQueueMiB: 1025 }, 'pullThresholdSizeForQueueMiB'],
    [{ consumeConcurrentlyMaxSpan: 0 }, 'consumeConcurrentlyMaxSpan'],
    [{ pullIntervalMs: 65536 }, 'pullIntervalMs'],
    [{ messageModel: 'X' }, 'messageModel'],
    [{ consumeFromWhere: 'middle' }, 'consumeFromWhere'],
    [{ allocateStrategy: 'X' }, 'allocateStrategy'],
    [{ pullThresholdForTopic: 0 }, 'pullThresholdForTopic'],
    [{ pullTimeoutMs: 1000 }, 'pullTimeoutMs'],
    [{ pullBatchSize: 1.5 }, 'pullBatchSize'],
  ];
  for (const [o, name] of bad) {
    let caught: unknown;
    try {
      resolveConsumerOptions({ ...base, ...o } as never);
    } catch (err) {
      caught = err;
    }
    t.ok(caught instanceof ConsumerOptionError && caught.option === name, `${name}: ${(caught as Error)?.message}`);
  }
  t.equal(
    resolveConsumerOptions({ ...base, pullIntervalMs: 0, consumeThreadMin: 1, consumeThreadMax: 1 }).pullIntervalMs,
    0,
    '0 is valid, not defaulted',
  );
  t.equal(
    resolveConsumerOptions({ ...base, consumeThreadMin: 100 }).consumeThreadMax,
    100,
    'max follows a larger min when not given',
  );
  t.equal(resolveConsumerOptions({ ...base, consumeTimeoutMs: 300 }).consumeTimeoutMs, 300);
});
