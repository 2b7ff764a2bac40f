// The consumer tests' helpers live in test/support; re-exported here so their many importers keep one import line.
export {
  brokerOffsets,
  createTopic,
  FAST_DELAY_LEVELS,
  freePort,
  produce,
  totalLag,
  withBroker,
  type QueueOffsets,
} from '../support/embedded-broker.js';
export { uniqueName } from '../support/names.js';
export { until } from '../support/until.js';
