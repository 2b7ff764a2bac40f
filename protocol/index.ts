export * from './errors.js';
export * from './codes.js';
export * from './command.js';
export * from './java-hash.js';
export * from './header-json.js';
export * from './header-rocketmq.js';
export * from './frame.js';
