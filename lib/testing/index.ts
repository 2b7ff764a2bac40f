export {
  startTestCluster,
  durationMs,
  type TestCluster,
  type TestClusterOptions,
  type Duration,
} from './test-cluster.js';
export { WaitTimeoutError, TestClusterOptionError } from './errors.js';
