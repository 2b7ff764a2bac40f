export {
  startTestCluster,
  durationMs,
  type TestCluster,
  type TestClusterOptions,
  type Duration,
  type ClusterClientOptions,
} from './test-cluster.js';
export { WaitTimeoutError, TestClusterOptionError } from './errors.js';
