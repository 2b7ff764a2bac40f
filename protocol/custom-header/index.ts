export * from './define.js';
export * from './pull-message.js';
export * from './consumer-offset.js';
export * from './send-message.js';
export * from './queue-offset.js';
export * from './client-management.js';
export * from './admin.js';
export * from './reply-message.js';
