import { OptionError, RocketwireError } from '../../protocol/index.js';

/**
 * A condition a test waited on with `cluster.waitFor` that did not hold before its deadline.
 * @category Errors
 */
export class WaitTimeoutError extends RocketwireError {
  override readonly name = 'WaitTimeoutError';
  override readonly errorCode = 'ERR_WAIT_TIMEOUT';
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

/**
 * A duration given to `cluster.advance` or an option of `startTestCluster` that cannot be used.
 * @category Errors
 */
export class TestClusterOptionError extends OptionError {
  override readonly name = 'TestClusterOptionError';
  override readonly errorCode = 'ERR_TEST_CLUSTER_OPTION';
}
