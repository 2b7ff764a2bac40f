export * from './embedded-broker.js';
export * from './names.js';
export * from './until.js';
export * from './pull-all.js';
