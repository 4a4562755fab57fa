export * from './tcp-proxy';
export * from './callback-receiver';
