import { UsageError, intOption, stringOption } from '../common.js';
import { TARGET_HELP, targetOf } from './broker.js';
import { need, type AdminSubcommand } from './shared.js';

/** `rocketwire admin group consume-mode`: mqadmin setConsumeMode. */
export const groupConsumeMode: AdminSubcommand = {
  name: 'consume-mode',
  summary: 'switch how a group consumes a topic: POP or PULL (mqadmin setConsumeMode)',
  options: {
    group: { type: 'string' },
    topic: { type: 'string' },
    mode: { type: 'string' },
    'pop-share-queues': { type: 'string' },
    broker: { type: 'string' },
    cluster: { type: 'string' },
  },
  help: [
    '  --group G        the consumer group',
    '  --topic T        the topic',
    '  --mode M         POP or PULL',
    '  --pop-share-queues N  queues each client pops in POP mode (default 0: all)',
    TARGET_HELP.replace('every master)', "every master of the topic's route)"),
  ].join('\n'),
  async run(admin, v, out) {
    const group = need(v, 'group');
    const topic = need(v, 'topic');
    const mode = need(v, 'mode').toUpperCase();
    if (mode !== 'POP' && mode !== 'PULL') throw new UsageError(`--mode must be POP or PULL, got "${v.mode}"`);
    const popShareQueueNum = intOption('pop-share-queues', stringOption(v, 'pop-share-queues'), 0, 0, 65535);
    const addrs = await admin.setConsumeMode(group, topic, mode, { ...targetOf(v), popShareQueueNum });
    out.emit({ group, topic, mode, popShareQueueNum, brokers: addrs }, () => {
      for (const a of addrs) out.line(`set consume mode to ${a} success.`);
      out.line(`topic[${topic}] group[${group}] consume mode[${mode}] popShareQueueNum[${popShareQueueNum}]`);
    });
  },
};

/** `rocketwire admin topic perm`: mqadmin updateTopicPerm. */
export const topicPerm: AdminSubcommand = {
  name: 'perm',
  summary: "set a topic's permission: 2 write, 4 read, 6 both (mqadmin updateTopicPerm)",
  options: {
    topic: { type: 'string' },
    perm: { type: 'string' },
    broker: { type: 'string' },
    cluster: { type: 'string' },
  },
  help: [
    '  --topic T        the topic',
    '  --perm P         2, 4 or 6',
    TARGET_HELP.replace('every master)', "every master of the topic's route)"),
  ].join('\n'),
  async run(admin, v, out) {
    const topic = need(v, 'topic');
    const perm = intOption('perm', need(v, 'perm'), 6, 0, 7);
    const r = await admin.updateTopicPerm(topic, perm, targetOf(v));
    out.emit({ topic, brokers: r }, () => {
      for (const x of r)
        out.line(
          x.changed
            ? `update topic perm from ${x.oldPerm} to ${x.perm} in ${x.addr} success.`
            : `new perm equals to the old one! (${x.addr})`,
        );
    });
  },
};

/** `rocketwire admin offset clone`: DefaultMQAdminExt#cloneGroupOffset. */
export const offsetClone: AdminSubcommand = {
  name: 'clone',
  summary: "copy a group's committed offsets of a topic to another group (mqadmin cloneGroupOffset)",
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
    topic: { type: 'string' },
    offline: { type: 'boolean' },
  },
  help: [
    '  --from G         the source group',
    '  --to G           the destination group',
    '  --topic T        the topic',
    '  --offline        also when the online source group does not subscribe to T',
  ].join('\n'),
  async run(admin, v, out) {
    const srcGroup = need(v, 'from');
    const destGroup = need(v, 'to');
    const topic = need(v, 'topic');
    const addrs = await admin.cloneGroupOffset(srcGroup, destGroup, topic, { offline: v.offline === true });
    out.emit({ srcGroup, destGroup, topic, brokers: addrs }, () =>
      out.line(`clone group offset success. srcGroup[${srcGroup}], destGroup=[${destGroup}], topic[${topic}]`),
    );
  },
};

/** `rocketwire admin offset skip`: mqadmin skipAccumulatedMessage. */
export const offsetSkip: AdminSubcommand = {
  name: 'skip',
  summary: "skip a group's backlog on a topic: every queue to its max offset (mqadmin skipAccumulatedMessage)",
  options: { group: { type: 'string' }, topic: { type: 'string' } },
  help: ['  --group G        the consumer group (running or stopped)', '  --topic T        the topic'].join('\n'),
  async run(admin, v, out) {
    const group = need(v, 'group');
    const topic = need(v, 'topic');
    const r = await admin.skipAccumulatedMessage(group, topic);
    out.emit({ group, topic, ...r }, () =>
      out.table(
        ['brokerName', 'queueId', 'offset'],
        r.queues.map((q) => [q.brokerName, String(q.queueId), String(q.offset)]),
      ),
    );
  },
};
