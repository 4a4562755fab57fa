// Small helpers over PostgreSQL connection strings, so no caller hand-edits URLs or leaks passwords.

/** The database name of a connection string (`/deposit_withdraw` → `deposit_withdraw`). */
export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database (expected postgresql://user@host:port/<database>)');
  return name;
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** `host:port` of a connection string, for messages: never the user or the password. */
export function serverAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`;
}

/** Double-quotes an identifier for SQL (database names cannot be bind parameters). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
