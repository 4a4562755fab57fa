// createPrisma (tests set up and inspect rows with it; the service runs on a pg pool and builds
// amounts as text in SQL), and how amounts survive the trip through Prisma: "100.50" stays "100.50"
// only when written as a string.
import { randomUUID } from 'node:crypto';
import { createPrisma, createTestDatabase, Prisma, type PrismaClient, type TestDatabase } from '../src/testing';

let db: TestDatabase;
let prisma: PrismaClient;
let merchantId: string;

beforeAll(async () => {
  db = await createTestDatabase('prisma_client');
  prisma = createPrisma(db.url, 2);
  merchantId = randomUUID();
  await prisma.merchant.create({ data: { id: merchantId, name: 'm', apiTokenHash: 'a'.repeat(64), callbackSigningSecret: 'whsec_x' } });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

async function insert(amount: string | Prisma.Decimal): Promise<string> {
  const now = new Date();
  const id = randomUUID();
  await prisma.transaction.create({
    data: { id, merchantId, type: 'deposit', status: 'pending', currency: 'USD', orderId: id, lastSequence: 1, createdAt: now, updatedAt: now, amount },
  });
  return id;
}

async function storedText(id: string): Promise<string> {
  const rows = await prisma.$queryRaw<Array<{ amount: string }>>`SELECT amount::text AS amount FROM transactions WHERE id = ${id}::uuid`;
  return rows[0]!.amount;
}

describe('createPrisma', () => {
  it('stores an amount given as a string with its scale, exactly', async () => {
    expect(await storedText(await insert('100.50'))).toBe('100.50');
    expect(await storedText(await insert('999999999999999999.99999999'))).toBe('999999999999999999.99999999');
  });

  it('reads amounts back as Prisma.Decimal: the value is exact, trailing zeros are not kept', async () => {
    const id = await insert('100.50');
    const row = await prisma.transaction.findUniqueOrThrow({ where: { id }, select: { amount: true } });
    expect(row.amount).toBeInstanceOf(Prisma.Decimal);
    expect(row.amount.toFixed()).toBe('100.5');
  });

  it('normalises a Prisma.Decimal before writing it ("100.50" becomes 100.5): pass strings to keep the scale', async () => {
    expect(await storedText(await insert(new Prisma.Decimal('100.50')))).toBe('100.5');
  });
});
