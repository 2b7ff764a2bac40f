// The client refuses the names the broker would refuse (protocol/resource-names.ts), up front and
// naming the option, as Java's Validators do: the producer's group and message topics, the push
// consumer's group and subscribed topics.
import t from 'tap';
import { Producer, validateTopic } from '../../lib/producer/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';

t.test('producer: group and topic names', async (t) => {
  t.throws(() => new Producer({ namesrvAddr: '127.0.0.1:9876', group: 'g'.repeat(121) }), {
    name: 'ProducerOptionError',
    option: 'group',
  });
  t.throws(() => new Producer({ namesrvAddr: '127.0.0.1:9876', group: 'x/../g' }), {
    name: 'ProducerOptionError',
    option: 'group',
  });
  t.ok(new Producer({ namesrvAddr: '127.0.0.1:9876', group: 'g'.repeat(120) }));
  // what send / sendBatch / fetchPublishMessageQueues check a message's topic with
  t.throws(() => validateTopic('x/../../../escape_poc'), { name: 'MessageValidationError', field: 'topic' });
  t.throws(() => validateTopic('SCHEDULE_TOPIC_XXXX'), {
    name: 'MessageValidationError',
    field: 'topic',
    message: 'sending message to topic SCHEDULE_TOPIC_XXXX is forbidden',
  });
  t.equal(validateTopic('%RETRY%g'), '%RETRY%g');
});

t.test('push consumer: group and subscribed topic names', async (t) => {
  const base = { namesrvAddr: '127.0.0.1:9876', consumerGroup: 'cg' };
  t.throws(() => new PushConsumer({ ...base, consumerGroup: 'g'.repeat(121) }), {
    name: 'ConsumerOptionError',
    option: 'consumerGroup',
  });
  t.throws(() => new PushConsumer({ ...base, subscriptions: { 'x/../T2': '*' } }), {
    name: 'ConsumerOptionError',
    option: 'subscriptions',
  });
  const c = new PushConsumer(base);
  t.throws(() => c.subscribe('a b'), {
    name: 'ConsumerOptionError',
    option: 'topic',
    message: /contains illegal characters/,
  });
  t.equal(c.subscribe('Fine_Topic-1', 'a||b'), c);
});
