export * from './tcp-proxy';
export * from './callback-receiver';
export * from './test-tracing';
export * from './drop-database';
export * from './raw-path';
export * from './test-prefix';
