import t from 'tap';
import {
  ClientOptionError,
  namespaceOf,
  queueWithNamespace,
  resolveNamespace,
  withoutNamespace,
  wrapNamespace,
} from '../../lib/client/index.js';

// The rules of Apache's NamespaceUtil (wrapNamespace / withoutNamespace(resource, ns) / getNamespaceFromResource).
const table: Array<[resource: string, wrapped: string]> = [
  ['TopicA', 'NS1%TopicA'],
  ['GID_a', 'NS1%GID_a'],
  ['%RETRY%GID_a', '%RETRY%NS1%GID_a'],
  ['%DLQ%GID_a', '%DLQ%NS1%GID_a'],
  ['NS1%TopicA', 'NS1%TopicA'], // already wrapped
  ['%RETRY%NS1%GID_a', '%RETRY%NS1%GID_a'],
  ['TBW102', 'TBW102'], // system topics are never wrapped
  ['SCHEDULE_TOPIC_XXXX', 'SCHEDULE_TOPIC_XXXX'],
  ['RMQ_SYS_TRACE_TOPIC', 'RMQ_SYS_TRACE_TOPIC'],
  ['rmq_sys_wheel_timer', 'rmq_sys_wheel_timer'],
  ['CID_RMQ_SYS_X', 'CID_RMQ_SYS_X'],
  ['OTHER%TopicA', 'NS1%OTHER%TopicA'], // another namespace's name is wrapped again, as Java does
];

t.test('wrap and unwrap, as NamespaceUtil', async (t) => {
  for (const [resource, wrapped] of table) {
    t.equal(wrapNamespace('NS1', resource), wrapped, `wrap ${resource}`);
    if (!resource.startsWith('NS1%') && !resource.includes('%NS1%'))
      t.equal(withoutNamespace('NS1', wrapped), resource, `unwrap ${wrapped}`);
  }
  t.equal(withoutNamespace('NS1', 'NS2%TopicA'), 'NS2%TopicA', 'another namespace is not stripped');
  t.equal(withoutNamespace('NS1', '%RETRY%NS2%G'), '%RETRY%NS2%G');
  t.equal(wrapNamespace(undefined, 'TopicA'), 'TopicA', 'no namespace: names as they are');
  t.equal(namespaceOf('%DLQ%NS1%G'), 'NS1');
  t.equal(namespaceOf('TopicA'), '');
  t.same(queueWithNamespace('NS1', { topic: 'T', brokerName: 'b', queueId: 1 }), {
    topic: 'NS1%T',
    brokerName: 'b',
    queueId: 1,
  });
});

t.test('a namespace with illegal characters is refused naming the option', async (t) => {
  t.equal(resolveNamespace(undefined), undefined);
  t.equal(resolveNamespace(''), undefined);
  t.equal(resolveNamespace('MQ_INST_1-a'), 'MQ_INST_1-a');
  for (const bad of ['a%b', 'a b', 'ns.1', 'x'.repeat(65), 'ä', 7]) {
    t.equal(
      caught(() => resolveNamespace(bad)),
      'namespace',
      `refuses ${String(bad)}`,
    );
  }
});

function caught(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClientOptionError) return e.option;
    throw e;
  }
  return undefined;
}
