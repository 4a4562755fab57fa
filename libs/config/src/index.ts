export * from './env';
export * from './services';
