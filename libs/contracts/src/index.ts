export * from './primitives';
export * from './transactions';
export * from './callbacks';
export * from './view';
export * from './problem';
export * from './events';
export * from './headers';
export * from './event-body';
