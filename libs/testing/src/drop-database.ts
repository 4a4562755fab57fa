/** What dropTestDatabase needs of a connected pg client (so this library need not depend on pg). */
export interface AdminQueryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

const SETTLE_MS = 5_000;

/**
 * Drops a test database once the connections its test closed have gone. pg's `pool.end()` resolves
 * before its connections' backends have exited; a DROP DATABASE … WITH (FORCE) at that moment
 * terminates them, and the server's "terminating connection due to administrator command" (57P01)
 * reaches an idle pooled client as an 'error' event. A test's own pool rarely listens for it, so it
 * becomes an uncaught exception that fails the test file (seen once in CI; 133 of 200 drops in a
 * tight loop). So wait, up to 5 s, for the database to have no sessions; FORCE then only ends a
 * connection a test really left open.
 */
export async function dropTestDatabase(admin: AdminQueryable, name: string): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    if (rows[0]?.n === 0 || Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
}
