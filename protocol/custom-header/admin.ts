import { defineHeader, F, type HeaderOf } from './define.js';

const viewSpec = { offset: F.long.required(), topic: F.string.optional() };
/** VIEW_MESSAGE_BY_ID (33): offset Long req (commit-log offset from the offset msgId), 5.x topic. */
export const ViewMessageRequestHeader = defineHeader('ViewMessageRequestHeader', viewSpec);
export type ViewMessageRequestHeader = HeaderOf<typeof viewSpec>;

const createTopicSpec = {
  topic: F.string.required(),
  defaultTopic: F.string.required(),
  readQueueNums: F.int.required(),
  writeQueueNums: F.int.required(),
  perm: F.int.required(),
  topicFilterType: F.string.required(),
  topicSysFlag: F.int.optional(),
  order: F.boolean.required(),
  attributes: F.string.optional(),
  force: F.boolean.optional(),
};
/**
 * UPDATE_AND_CREATE_TOPIC (17), `CreateTopicRequestHeader`: topic, defaultTopic String req |
 * readQueueNums, writeQueueNums, perm Integer req | topicFilterType String req ("SINGLE_TAG") |
 * topicSysFlag Integer opt | order Boolean req | 5.x attributes String, force Boolean.
 */
export const CreateTopicRequestHeader = defineHeader('CreateTopicRequestHeader', createTopicSpec);
export type CreateTopicRequestHeader = HeaderOf<typeof createTopicSpec>;

const queryMessageSpec = {
  topic: F.string.required(),
  key: F.string.required(),
  maxNum: F.int.required(),
  beginTimestamp: F.long.required(),
  endTimestamp: F.long.required(),
  uniqueKeyQuery: F.boolean.optional('_UNIQUE_KEY_QUERY'),
};
/**
 * QUERY_MESSAGE (12): topic, key String | maxNum Integer | beginTimestamp, endTimestamp Long, all
 * required; plus ext key `_UNIQUE_KEY_QUERY` ("true"/"false") which we model as `uniqueKeyQuery`.
 */
export const QueryMessageRequestHeader = defineHeader('QueryMessageRequestHeader', queryMessageSpec);
export type QueryMessageRequestHeader = HeaderOf<typeof queryMessageSpec>;
const queryMessageResponseSpec = {
  indexLastUpdateTimestamp: F.long.required(),
  indexLastUpdatePhyoffset: F.long.required(),
};
/** QUERY_MESSAGE response: indexLastUpdateTimestamp, indexLastUpdatePhyoffset (Long). */
export const QueryMessageResponseHeader = defineHeader('QueryMessageResponseHeader', queryMessageResponseSpec);
export type QueryMessageResponseHeader = HeaderOf<typeof queryMessageResponseSpec>;

const registerSpec = {
  brokerName: F.string.required(),
  brokerAddr: F.string.required(),
  clusterName: F.string.required(),
  haServerAddr: F.string.required(),
  brokerId: F.long.required(),
  compressed: F.boolean.optional(),
  bodyCrc32: F.int.optional(),
  // Wire key as Java spells it (milliseconds).
  heartbeatTimeoutMillis: F.long.optional(),
  enableActingMaster: F.boolean.optional(),
};
/**
 * REGISTER_BROKER (103) to the name server: brokerName, brokerAddr, clusterName, haServerAddr
 * String req | brokerId Long req | compressed boolean opt | bodyCrc32 Integer opt (masked CRC32
 * of the body) | 5.x heartbeatTimeoutMillis Long, enableActingMaster Boolean.
 */
export const RegisterBrokerRequestHeader = defineHeader('RegisterBrokerRequestHeader', registerSpec);
export type RegisterBrokerRequestHeader = HeaderOf<typeof registerSpec>;
const registerResponseSpec = { haServerAddr: F.string.optional(), masterAddr: F.string.optional() };
/** REGISTER_BROKER response: haServerAddr, masterAddr (both optional). */
export const RegisterBrokerResponseHeader = defineHeader('RegisterBrokerResponseHeader', registerResponseSpec);
export type RegisterBrokerResponseHeader = HeaderOf<typeof registerResponseSpec>;

const endTxSpec = {
  producerGroup: F.string.required(),
  tranStateTableOffset: F.long.required(),
  commitLogOffset: F.long.required(),
  commitOrRollback: F.int.required(),
  fromTransactionCheck: F.boolean.optional(),
  msgId: F.string.required(),
  transactionId: F.string.optional(),
  topic: F.string.optional(),
  bname: F.string.optional(),
};
/**
 * END_TRANSACTION (37), producer → broker, oneway: producerGroup String req |
 * tranStateTableOffset, commitLogOffset Long req | commitOrRollback Integer req (0, 8 commit,
 * 12 rollback) | fromTransactionCheck Boolean opt | msgId String req | transactionId, 5.x topic opt.
 */
export const EndTransactionRequestHeader = defineHeader('EndTransactionRequestHeader', endTxSpec);
export type EndTransactionRequestHeader = HeaderOf<typeof endTxSpec>;

const checkTxSpec = {
  tranStateTableOffset: F.long.required(),
  commitLogOffset: F.long.required(),
  msgId: F.string.optional(),
  transactionId: F.string.optional(),
  offsetMsgId: F.string.optional(),
  topic: F.string.optional(),
  bname: F.string.optional(),
};
/**
 * CHECK_TRANSACTION_STATE (39), broker → producer: tranStateTableOffset, commitLogOffset Long
 * req | msgId, transactionId, offsetMsgId String opt | 5.x topic | bname (RpcRequestHeader's
 * field: the broker that asks, so the END_TRANSACTION goes back to it). Body: one stored message.
 */
export const CheckTransactionStateRequestHeader = defineHeader('CheckTransactionStateRequestHeader', checkTxSpec);
export type CheckTransactionStateRequestHeader = HeaderOf<typeof checkTxSpec>;
