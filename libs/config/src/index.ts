export * from './env';
export * from './services';
export * from './postgres';
export { default as serviceNodeOptions } from './node-options.json';
