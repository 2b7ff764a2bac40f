import { defineHeader, F, type HeaderOf } from './define.js';

/**
 * PUSH_REPLY_MESSAGE_TO_CLIENT (326) `ReplyMessageRequestHeader`: the broker pushes a reply to the
 * requesting client (Apache's ReplyMessageProcessor#pushReplyMessage, read back by
 * ClientRemotingProcessor#receiveReplyMessage). Long field names, as SEND_MESSAGE's V1 header, plus
 * the hosts and the store time the client cannot learn otherwise; the body is the reply's body as
 * the replier sent it (compressed when sysFlag says so).
 *
 * | key | type | req | meaning |
 * | producerGroup | String | yes | the replier's producer group |
 * | topic | String | yes | `<cluster>_REPLY_TOPIC` |
 * | defaultTopic | String | yes | the replier's createTopicKey |
 * | defaultTopicQueueNums | Integer | yes | |
 * | queueId | Integer | yes | the queue id the replier's send asked for |
 * | sysFlag | Integer | yes | MessageSysFlag bits (COMPRESSED) |
 * | bornTimestamp | Long | yes | the replier's clock |
 * | flag | Integer | yes | user flag |
 * | properties | String | no | the reply's properties, PUSH_REPLY_TIME added by the broker |
 * | reconsumeTimes | Integer | no | |
 * | unitMode | boolean | no | |
 * | bornHost | String | yes | "ip:port" of the replier's connection |
 * | storeHost | String | yes | "ip:port" of the broker |
 * | storeTimestamp | long | yes | the broker's clock when it pushed |
 */
const spec = {
  producerGroup: F.string.required(),
  topic: F.string.required(),
  defaultTopic: F.string.required(),
  defaultTopicQueueNums: F.int.required(),
  queueId: F.int.required(),
  sysFlag: F.int.required(),
  bornTimestamp: F.long.required(),
  flag: F.int.required(),
  properties: F.string.optional(),
  reconsumeTimes: F.int.optional(),
  unitMode: F.boolean.optional(),
  bornHost: F.string.required(),
  storeHost: F.string.required(),
  storeTimestamp: F.long.required(),
};
export const ReplyMessageRequestHeader = defineHeader('ReplyMessageRequestHeader', spec);
export type ReplyMessageRequestHeader = HeaderOf<typeof spec>;
