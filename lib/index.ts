// The public API of rocketwire. Each folder of lib/ exposes its surface through its own index.ts;
// the codec is also available on its own as `rocketwire/protocol`.
export * from '../protocol/index.js';
export * from './remoting/index.js';
export * from './client/index.js';
export * from './producer/index.js';
export * from './consumer/index.js';
export * from './capture/index.js';
// The store's GetMessageStatus is the broker's own view of the protocol's status of the same name.
export {
  startBroker,
  brokerName,
  Broker,
  BROKER_VERSION,
  NameServer,
  MessageStore,
  StoreWriteError,
  parseDelayLevels,
  DEFAULT_MESSAGE_DELAY_LEVEL,
  type StartBrokerOptions,
  type EmbeddedBroker,
  type BrokerOptions,
  type GetMessageResult,
  type PutMessageResult,
} from './broker/index.js';
export { ManualClock, systemClock, sleep, type Clock, type ClockTimer } from './clock.js';
