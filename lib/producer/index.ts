export * from './errors.js';
export * from './message.js';
export * from './producer.js';
export * from './producer-options.js';
export * from './send-result.js';
export * from './topic-publish-info.js';
export * from './transaction-producer.js';
export * from './request-reply.js';
export { ProducerEvents, type ProducerEventMap, type SendEvent } from './events.js';
