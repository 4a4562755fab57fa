export * from './tcp-proxy';
export * from './callback-receiver';
export * from './test-tracing';
