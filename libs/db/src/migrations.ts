// Migration entry (`@dw/db/migrations`): for the migrate CLI and the test databases, kept out of the
// main entry so that no service loads migration code. Authoring new migrations is src/authoring.
export * from './migrations/deploy-migrations';
export { findPrismaDir, migrationsDir } from './migrations/migrations-dir';
