export * from './admin-client.js';
export * from './errors.js';
