/**
 * The embedded name server + broker, for tests and local development: `startBroker()` starts both
 * in this process (or `npx rocketwire broker` in its own), and real RocketMQ clients (Java, Go,
 * rocketwire) accept it.
 *
 * ```ts
 * import { startBroker } from 'rocketwire/broker';
 * const broker = await startBroker();
 * // … new Producer({ group: 'pg', namesrvAddr: broker.namesrv }) …
 * await broker.close();
 * ```
 *
 * @module rocketwire/broker
 */
// The `rocketwire/broker` entry point (package.json `exports`). Kept out of `rocketwire` so that an
// application that only produces and consumes never loads the broker (import cost).
// test/api/api-report.txt lists what is exported here; lib/broker/index.ts is the folder's own
// index, with the runtime that tests import by path.
export {
  startBroker,
  BrokerOptionError,
  StoreWriteError,
  AclConfigError,
  type AclConfig,
  type AclAccount,
  type BrokerAuthOptions,
  type StartBrokerOptions,
  type EmbeddedBroker,
} from './index.js';
