/**
 * Tests of your own application against a real broker, in milliseconds of wall time: an embedded
 * name server and broker and every client made from it share one ManualClock, so a transaction
 * check-back, a 3-day timer, a POP invisibility expiry or a 15-minute consume timeout is one
 * `await cluster.advance(…)` away.
 *
 * ```ts
 * import { startTestCluster } from 'rocketwire/testing';
 * await using cluster = await startTestCluster();
 * const producer = cluster.producer({ group: 'pg' });
 * await producer.start();
 * await producer.send({ topic: 'Orders', body: 'x', delayMs: 3 * 86_400_000 });
 * await cluster.advance('3d');
 * ```
 *
 * @module rocketwire/testing
 */
// The `rocketwire/testing` entry point (package.json `exports`): kept apart from `rocketwire` so an
// application never loads the broker. test/api/api-report.txt lists what is exported here.
export {
  startTestCluster,
  WaitTimeoutError,
  TestClusterOptionError,
  type TestCluster,
  type TestClusterOptions,
  type Duration,
  type ClusterClientOptions,
} from './index.js';
export { ManualClock } from '../clock.js';
