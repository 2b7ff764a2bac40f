import { Operations } from '../../../protocol/internal.js';

/**
 * The request code of a lite pull. Java's 5.x client sends LITE_PULL_MESSAGE (361) whenever the lite
 * bit is set (MQClientAPIImpl.pullMessage) and 4.9's sends PULL_MESSAGE (11) with the same bit; a 4.9
 * broker does not know 361 (REQUEST_CODE_NOT_SUPPORTED). So: 361 to a broker whose heartbeat answer
 * says 5.0.0 or later, 11 to older ones and to a broker not heard from yet.
 */
export function litePullOperation(
  brokerVersion: number | undefined,
): typeof Operations.PULL_MESSAGE | typeof Operations.LITE_PULL_MESSAGE {
  return brokerVersion !== undefined && brokerVersion >= MQVersion_V5_0_0
    ? Operations.LITE_PULL_MESSAGE
    : Operations.PULL_MESSAGE;
}
/** MQVersion.Version.V5_0_0.ordinal(). */
const MQVersion_V5_0_0 = 413;
