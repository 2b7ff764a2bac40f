import {
  AddWritePermOfBrokerRequestHeader,
  AddWritePermOfBrokerResponseHeader,
  CloneGroupOffsetRequestHeader,
  GetBrokerConfigResponseHeader,
  GetProducerConnectionListRequestHeader,
  WipeWritePermOfBrokerRequestHeader,
  WipeWritePermOfBrokerResponseHeader,
} from '../custom-header/admin-ops.js';
import { BrokerConfigProperties, ProducerConnection } from '../body/admin-ops-bodies.js';
import { EmptyHeader, op } from '../operation.js';

/**
 * Rows of the operation table for the operator requests beside mqadmin's reads: broker config,
 * producer connections, a broker's write permission (to the name server) and the offset clone.
 * lib/admin calls them; lib/broker's AdminOpsProcessor and the embedded name server serve them.
 */
export const AdminOpsOperations = {
  GET_BROKER_CONFIG: op('GET_BROKER_CONFIG', {
    request: EmptyHeader,
    response: GetBrokerConfigResponseHeader,
    requestBody: 'none',
    responseBody: BrokerConfigProperties,
  }),
  UPDATE_BROKER_CONFIG: op('UPDATE_BROKER_CONFIG', {
    request: EmptyHeader,
    response: EmptyHeader,
    requestBody: BrokerConfigProperties,
    responseBody: 'none',
  }),
  GET_PRODUCER_CONNECTION_LIST: op('GET_PRODUCER_CONNECTION_LIST', {
    request: GetProducerConnectionListRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: ProducerConnection,
  }),
  WIPE_WRITE_PERM_OF_BROKER: op('WIPE_WRITE_PERM_OF_BROKER', {
    request: WipeWritePermOfBrokerRequestHeader,
    response: WipeWritePermOfBrokerResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  ADD_WRITE_PERM_OF_BROKER: op('ADD_WRITE_PERM_OF_BROKER', {
    request: AddWritePermOfBrokerRequestHeader,
    response: AddWritePermOfBrokerResponseHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  CLONE_GROUP_OFFSET: op('CLONE_GROUP_OFFSET', {
    request: CloneGroupOffsetRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
} as const;
