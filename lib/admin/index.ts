export * from './admin-client.js';
export * from './errors.js';
export { formatMessageTrace, type MessageTraceQuery, type MessageTraceView } from './admin-trace.js';
