export * from './escape.js';
export * from './timeline.js';
export * from './svg.js';
export * from './render.js';
export * from './report-file.js';
