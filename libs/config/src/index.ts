export * from './env';
export * from './services';
export * from './postgres';
