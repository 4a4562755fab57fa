/**
 * The sandbox settler through a database outage (its database refusing connections, as while
 * PostgreSQL restarts or the database is not there yet): it says so once, keeps trying every tick at
 * debug level, and says once that it settles again; not a warning four times a second.
 */
import { Writable } from 'node:stream';
import { createPool } from '@dw/db';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import pg from 'pg';
import pino from 'pino';
import { startSandboxSettler } from '../../src/domain/sandbox-settler';

let db: TestDatabase;
let admin: pg.Client;
let name: string;
beforeAll(async () => {
  db = await createTestDatabase('settler-outage');
  name = new URL(db.url).pathname.slice(1);
  admin = new pg.Client({ connectionString: db.url.replace(`/${name}`, '/postgres') });
  await admin.connect();
});
afterAll(async () => {
  await admin?.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
  await admin?.end();
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('warns once when its database goes away, logs each failed tick at debug, and says once when it settles again', async () => {
  const lines: { level: number; msg: string; failures?: number }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const pool = createPool(db.url, 2);
  const settler = startSandboxSettler(pool, 80, log); // a tick every 20 ms
  try {
    await sleep(200);
    expect(lines).toEqual([]); // healthy: nothing to say

    await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    await sleep(1000);
    const during = lines.slice();
    expect(during.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['sandbox settler tick failed; retrying every tick, told again when it settles']);
    expect(during.filter((l) => l.level === 20).length).toBeGreaterThanOrEqual(5); // ~50 ticks in the second, each failed

    await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    await sleep(500);
    const infos = lines.filter((l) => l.level === 30);
    expect(infos.map((l) => l.msg)).toEqual(['sandbox settler settling again']);
    expect(infos[0]?.failures).toBeGreaterThanOrEqual(during.length);
    expect(lines.filter((l) => l.level === 40)).toHaveLength(1);
  } finally {
    await settler.stop();
    await pool.end();
  }
});
