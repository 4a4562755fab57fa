export * from './attempt-result';
export * from './delivery-message';
export * from './prepare-delivery';
export * from './sign-callback';
export * from './send-callback';
export * from './record-attempt';
export * from './schedule-retry';
export * from './deliver-callback';
