export * from './errors';
export * from './problem';
export * from './validation';
export * from './problem-handler';
export * from './request-id';
export * from './health';
export * from './create-service';
export * from './run-service';
