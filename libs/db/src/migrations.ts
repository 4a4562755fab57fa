// Migration entry (`@dw/db/migrations`): for the migrate CLI and the test databases, kept out of the
// main entry so that no service loads migration code.
export * from './migrations/schema-engine';
export { findPrismaDir, migrationsDir } from './migrations/migrations-dir';
export { lastEnginePanic } from './migrations/wasm-schema-engine';
