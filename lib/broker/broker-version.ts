import { MQVersion } from '../../protocol/index.js';

/** The version this broker claims in heartbeat answers (>= V4_1_0_SNAPSHOT keeps SQL92 enabled client-side). */
export const BROKER_VERSION = MQVersion.V4_9_8;
