export * from './topology';
export * from './headers';
export * from './publish';
export type { MessagingLogger } from './logger';
export type { ConnectedContext, ConsumeOptions, MessageHandler } from './connection-scope';
export { HandBackError } from './connection-scope';
export * from './connection';
export * from './broadcast';
