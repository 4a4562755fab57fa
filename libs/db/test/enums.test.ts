// The database's enums (prisma/schema.prisma, created by the migrations) and the public API's
// literal unions (libs/contracts) name the same values: a status added to one and not the other
// fails typecheck here, and fails this test when a migration and the schema disagree.
import { DELIVERY_STATUSES, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '@dw/contracts';
import type { DeliveryStatusName, TransactionStatusName, TransactionTypeName } from '@dw/contracts';
import pg from 'pg';
import type { DeliveryStatus, TransactionStatus, TransactionType } from '../src';
import { createTestDatabase, type TestDatabase } from '../src/testing';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTypes: [Same<DeliveryStatus, DeliveryStatusName>, Same<TransactionStatus, TransactionStatusName>, Same<TransactionType, TransactionTypeName>] = [
  true,
  true,
  true,
];

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase('enums');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function enumValues(name: string): Promise<string[]> {
  const { rows } = await client.query<{ label: string }>(
    'SELECT enumlabel AS label FROM pg_enum WHERE enumtypid = $1::regtype ORDER BY enumsortorder',
    [name],
  );
  return rows.map((row) => row.label);
}

describe('enums', () => {
  it('agree between the schema and the public API at compile time', () => {
    expect(sameTypes).toEqual([true, true, true]);
  });

  it.each([
    ['delivery_status', DELIVERY_STATUSES],
    ['transaction_status', TRANSACTION_STATUSES],
    ['transaction_type', TRANSACTION_TYPES],
  ])('%s holds exactly the values the API publishes', async (name, values) => {
    expect(await enumValues(name)).toEqual([...values]);
  });
});
