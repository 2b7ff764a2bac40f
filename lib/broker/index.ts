export { startBroker, brokerName, type StartBrokerOptions, type EmbeddedBroker } from './start-broker.js';
export { Broker, BROKER_VERSION, type BrokerOptions, type BrokerTuning } from './broker.js';
export { NameServer } from './name-server.js';
export { MessageStore, type GetMessageStatus, type GetMessageResult, type PutMessageResult } from './message-store.js';
export {
  StoreWriteError,
  BrokerOptionError,
  NotAFolderError,
  ChannelExpiredError,
  ConfigFileError,
  StorePathError,
} from './errors.js';
export { parseDelayLevels, DEFAULT_MESSAGE_DELAY_LEVEL } from './schedule-message-service.js';
export { AclConfigError, type AclConfig, type AclAccount, type PermissionChecker, type Decision } from './acl/index.js';
export { AuthMetadataError } from './acl/errors.js';
export type { BrokerAuthOptions } from './acl/auth-setup.js';
