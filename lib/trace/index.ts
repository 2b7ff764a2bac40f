export * from './async-trace-dispatcher.js';
export * from './errors.js';
export * from './trace-data-encoder.js';
export * from './trace-hooks.js';
export * from './trace-producer.js';
export * from './trace-types.js';
