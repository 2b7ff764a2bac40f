// Only for lib/consumer/message-queue.ts, which imports this path: the key is protocol's
// resetOffsetKey (protocol/body/message-queue.ts). Delete this file once lib/consumer imports protocol.
export { resetOffsetKey } from '../../protocol/internal.js';
