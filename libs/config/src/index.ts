export * from './env';
export * from './services';
export { default as serviceNodeOptions } from './node-options.json';
