export * from './message-queue.js';
export * from './heartbeat-data.js';
export * from './heartbeat-fingerprint.js';
export * from './topic-route-data.js';
export * from './topic-queue-mapping.js';
export * from './consumer-bodies.js';
export * from './consumer-offset-file.js';
