// Test-only entry (`@dw/db/testing`): kept out of the main entry so no service bundle carries it.
export * from './testing/template-database';
export * from './testing/prisma-client';
