export * from './errors.js';
export * from './common.js';
export * from './computers.js';
export * from './actions.js';
export * from './health.js';
export * from './exec.js';
export * from './events.js';
export * from './screencast.js';
