export * from './in-transaction';
