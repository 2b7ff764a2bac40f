import { intOption, stringOption } from '../common.js';
import { messageJson, need, printMessage, type AdminCommandGroup } from './shared.js';
import type { FoundMessage } from '../../admin/index.js';
import { messageTrace } from './message-trace.js';

function emitMessages(
  out: Parameters<AdminCommandGroup['subcommands'][number]['run']>[2],
  found: FoundMessage[],
): void {
  out.emit(
    found.map((f) => messageJson(f.message, { brokerName: f.brokerName, brokerAddr: f.brokerAddr })),
    () => {
      found.forEach((f, i) => {
        if (i > 0) out.line('');
        printMessage(out, f.message, f.brokerName);
      });
    },
  );
}

/** `rocketwire admin message id|key|offset|trace`. */
export const message: AdminCommandGroup = {
  name: 'message',
  summary: 'look messages up by id, key or queue offset and print headers, properties and body; a message trace',
  subcommands: [
    {
      name: 'id',
      summary: 'by offset msgId (VIEW_MESSAGE_BY_ID), or by unique key with --topic (mqadmin queryMsgById)',
      options: { id: { type: 'string' }, topic: { type: 'string' } },
      help: [
        "  --id ID          offset msgId or the producer's msgId (UNIQ_KEY)",
        '  --topic T        the topic (needed for a UNIQ_KEY msgId)',
      ].join('\n'),
      async run(admin, v, out) {
        emitMessages(out, await admin.messageById(need(v, 'id'), stringOption(v, 'topic')));
      },
    },
    {
      name: 'key',
      summary: 'by key over the key index (QUERY_MESSAGE; mqadmin queryMsgByKey)',
      options: {
        topic: { type: 'string' },
        key: { type: 'string' },
        max: { type: 'string' },
        begin: { type: 'string' },
        end: { type: 'string' },
      },
      help: [
        '  --topic T        the topic',
        '  --key K          one key of the messages (KEYS) or a UNIQ_KEY',
        '  --max N          most messages per broker (default 64, the broker caps it at 64)',
        '  --begin MS       stored at or after (default 0)',
        '  --end MS         stored at or before (default: now and later)',
      ].join('\n'),
      async run(admin, v, out) {
        const opts = {
          maxNum: intOption('max', stringOption(v, 'max'), 64, 1, 64),
          beginTimestamp: intOption('begin', stringOption(v, 'begin'), 0),
          endTimestamp: intOption('end', stringOption(v, 'end'), Number.MAX_SAFE_INTEGER),
        };
        emitMessages(out, await admin.messageByKey(need(v, 'topic'), need(v, 'key'), opts));
      },
    },
    {
      name: 'offset',
      summary: 'the message at one queue offset (mqadmin queryMsgByOffset)',
      options: {
        topic: { type: 'string' },
        broker: { type: 'string' },
        queue: { type: 'string' },
        offset: { type: 'string' },
      },
      help: [
        '  --topic T        the topic',
        '  --broker NAME    broker name (broker-a)',
        '  --queue N        queue id',
        '  --offset N       queue offset',
      ].join('\n'),
      async run(admin, v, out) {
        const f = await admin.messageByOffset(
          need(v, 'topic'),
          need(v, 'broker'),
          intOption('queue', need(v, 'queue'), 0, 0, 65_535),
          intOption('offset', need(v, 'offset'), 0),
        );
        emitMessages(out, [f]);
      },
    },
    messageTrace,
  ],
};
