/**
 * The interop harness, kept at its old address for the suites and benches that import it: the
 * modules live in test/support (maven-jars, jvm, raw-remoting, real-cluster and the files it
 * uses; see test/support/README.md).
 */
export { delay, trackDir, trackProcess, untrackDir } from '../support/jvm.js';
export {
  cacheDir,
  ensureJars,
  jarsDir,
  jarsPresent,
  repoRoot,
  run,
  V4_VERSION,
  V53_VERSION,
  V5_VERSION,
  V55_VERSION,
} from '../support/maven-jars.js';
export {
  parseRouteBody,
  RawConnection,
  rawInvoke,
  type AclCredentials,
  type TopicRoute,
} from '../support/raw-remoting.js';
export { CLUSTER_NAME, type RealCluster, type RealClusterOptions } from '../support/real-cluster-model.js';
export { startRealCluster } from '../support/real-cluster.js';
