import { defineHeader, F, type HeaderOf } from './define.js';

/**
 * Headers of the operator requests beside mqadmin's reads (Java's remoting/protocol/header classes
 * of 5.3.3): broker config, producer connections, a broker's write permission on the name server,
 * and the broker-side offset clone.
 */

/** GET_BROKER_CONFIG (26) response, `GetBrokerConfigResponseHeader`: version String req (the config's DataVersion as JSON). */
const brokerConfigSpec = { version: F.string.optional() };
export const GetBrokerConfigResponseHeader = defineHeader('GetBrokerConfigResponseHeader', brokerConfigSpec);
export type GetBrokerConfigResponseHeader = HeaderOf<typeof brokerConfigSpec>;

/** GET_PRODUCER_CONNECTION_LIST (204), `GetProducerConnectionListRequestHeader`: producerGroup String req. */
const producerConnectionSpec = { producerGroup: F.string.required() };
export const GetProducerConnectionListRequestHeader = defineHeader(
  'GetProducerConnectionListRequestHeader',
  producerConnectionSpec,
);
export type GetProducerConnectionListRequestHeader = HeaderOf<typeof producerConnectionSpec>;

/** WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327) to a name server: brokerName String req. */
const writePermSpec = { brokerName: F.string.required() };
export const WipeWritePermOfBrokerRequestHeader = defineHeader('WipeWritePermOfBrokerRequestHeader', writePermSpec);
export type WipeWritePermOfBrokerRequestHeader = HeaderOf<typeof writePermSpec>;
export const AddWritePermOfBrokerRequestHeader = defineHeader('AddWritePermOfBrokerRequestHeader', writePermSpec);
export type AddWritePermOfBrokerRequestHeader = HeaderOf<typeof writePermSpec>;

/** WIPE_WRITE_PERM_OF_BROKER response, `WipeWritePermOfBrokerResponseHeader`: wipeTopicCount Integer req (topics whose route lost write). */
const wipeCountSpec = { wipeTopicCount: F.int.required() };
export const WipeWritePermOfBrokerResponseHeader = defineHeader('WipeWritePermOfBrokerResponseHeader', wipeCountSpec);
export type WipeWritePermOfBrokerResponseHeader = HeaderOf<typeof wipeCountSpec>;

/** ADD_WRITE_PERM_OF_BROKER response, `AddWritePermOfBrokerResponseHeader`: addTopicCount Integer req. */
const addCountSpec = { addTopicCount: F.int.required() };
export const AddWritePermOfBrokerResponseHeader = defineHeader('AddWritePermOfBrokerResponseHeader', addCountSpec);
export type AddWritePermOfBrokerResponseHeader = HeaderOf<typeof addCountSpec>;

/**
 * CLONE_GROUP_OFFSET (314), `CloneGroupOffsetRequestHeader`: srcGroup String req | destGroup String
 * req | topic String opt (every topic the source group has offsets of when absent) | offline
 * boolean req (false: a topic the online source group does not subscribe to is skipped).
 */
const cloneSpec = {
  srcGroup: F.string.required(),
  destGroup: F.string.required(),
  topic: F.string.optional(),
  offline: F.boolean.required(),
};
export const CloneGroupOffsetRequestHeader = defineHeader('CloneGroupOffsetRequestHeader', cloneSpec);
export type CloneGroupOffsetRequestHeader = HeaderOf<typeof cloneSpec>;
