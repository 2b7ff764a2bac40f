export * from './client-metrics.js';
export * from './meter.js';
export * from './metric-names.js';
export type * from './otel-types.js';
export * from './aggregating-meter.js';
export * from './tracing.js';
export type * from './otel-trace-types.js';
