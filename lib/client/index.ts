export * from './client-options.js';
export * from './consumer-inner.js';
export * from './errors.js';
export * from './heartbeat-data.js';
export * from './mq-client-api.js';
export * from './mq-client-instance.js';
export * from './scheduled-task.js';
export * from './topic-route.js';
