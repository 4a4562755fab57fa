/**
 * The claim and the seen mark run once per batch of deliveries, for as long as the service lives:
 * their cost must not grow with the number of open deliveries (a backlog of 10,000 after an
 * outage), only with the batch; nor may it depend on when PostgreSQL last analyzed the tables.
 */
import { Client } from 'pg';
import { CLAIM_SQL, MARK_SEEN_SQL } from '../src/delivery';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { insertDeliveries, insertMerchant } from './support/fixtures';

let db: TestDatabase;
let client: Client;
let merchantId: string;

beforeAll(async () => {
  db = await createTestDatabase('claim_cost');
  client = new Client({ connectionString: db.url });
  await client.connect();
  merchantId = (await insertMerchant(client, { deposit: 'http://127.0.0.1:9/unused' })).id;
  // A service that has lived a while: its deliveries settled, and PostgreSQL's statistics saying
  // so. Then a backlog arrives faster than autovacuum (off here) analyzes the table again.
  await client.query('ALTER TABLE callback_deliveries SET (autovacuum_enabled = false)');
  await deliveries(20_000, 'succeeded');
  await client.query('ANALYZE callback_deliveries');
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** `count` more deliveries with `status`, and no dead row versions left by earlier measurements (the statistics stay as they were). */
async function deliveries(count: number, status: 'pending' | 'succeeded'): Promise<string[]> {
  const ids = await insertDeliveries(client, merchantId, count, status);
  await client.query('VACUUM callback_deliveries');
  return ids;
}

interface Measured {
  /** Pages the statement's scans read to find its rows (its writes are not counted: where a new row version lands varies). */
  pages: number;
  /** The indexes the plan reads, e.g. callback_deliveries_pkey. */
  indexes: string[];
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

const SCANS = new Set(['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan']);

function indexesOf(node: PlanNode): string[] {
  return [...(node['Index Name'] ? [node['Index Name']] : []), ...(node.Plans ?? []).flatMap(indexesOf)];
}

/** Pages read by the plan's scans (a scan's count includes its bitmap index scans). */
function scanPages(node: PlanNode): number {
  if (SCANS.has(node['Node Type'])) return node['Shared Hit Blocks'] + node['Shared Read Blocks'];
  return (node.Plans ?? []).reduce((sum, child) => sum + scanPages(child), 0);
}

/** One run of `sql` as the service runs it (planned for its parameters), rolled back. */
async function measure(sql: string, params: (ids: string[]) => string, ids: string[]): Promise<Measured> {
  await client.query('BEGIN');
  try {
    await client.query(`PREPARE measured AS ${sql}`);
    const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE measured(${params(ids)})`);
    const plan = rows[0]['QUERY PLAN'][0].Plan as PlanNode;
    return { pages: scanPages(plan), indexes: indexesOf(plan) };
  } finally {
    await client.query('ROLLBACK');
    await client.query('DEALLOCATE ALL'); // a prepared statement outlives the transaction
  }
}

const literal = (ids: string[]) => `ARRAY[${ids.map((id) => `'${id}'`).join(',')}]::text[]`;
const claimParams = (ids: string[]) => `${literal(ids)}, ARRAY[${ids.map(() => 1).join(',')}]::int[], 20000`;
const seenParams = (ids: string[]) => literal(ids);

describe.each([
  ['the claim', CLAIM_SQL, claimParams],
  ['the seen mark', MARK_SEEN_SQL, seenParams],
])('%s', (name, sql, params) => {
  it('reads as many pages for a batch of 10 whether 2,000 or 7,000 other deliveries are open, looking each one up by its key', async () => {
    const batch = await deliveries(10, 'pending');
    await deliveries(2000, 'pending');
    const before = await measure(sql, params, batch);

    await deliveries(5000, 'pending');
    const after = await measure(sql, params, batch);

    expect(after.indexes).toContain('callback_deliveries_pkey');
    expect(after.indexes).not.toContain('callback_deliveries_open_updated_at_idx');
    // Reading the 5,000 more would take dozens more pages.
    expect(after.pages).toBeLessThanOrEqual(before.pages + 3);
  });
});
