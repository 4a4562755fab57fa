export * from './pool';
export * from './sql';
export * from './in-transaction';
export * from './database-url';
export * from './ensure-database';
export * from './rows';
export * from './connection-loss';
export * from './retry-on';
