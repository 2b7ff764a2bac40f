// The public API of rocketwire. Each folder of lib/ exposes its surface through its own index.ts.
export * from '../protocol/index.js';
