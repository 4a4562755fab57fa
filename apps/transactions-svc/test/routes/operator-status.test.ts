import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService('operator');
});
afterAll(async () => svc?.close());

let n = 0;
async function newDeposit(amount = '10.00') {
  const res = await svc.as(svc.merchantA, {
    method: 'POST',
    url: '/api/createDeposit',
    payload: { amount, currency: 'USD', orderId: `op-${Date.now()}-${++n}` },
  });
  return res.json().id as string;
}

const move = (id: string, body: unknown, token: string | null = ADMIN_TOKEN) =>
  svc.app.inject({
    method: 'POST',
    url: `/internal/transactions/${id}/status`,
    headers: token === null ? {} : { 'x-admin-token': token },
    payload: body as object,
  });

async function eventTypes(id: string) {
  const rows = await svc.db.$queryRaw<{ sequence: number; type: string; reason: string | null }[]>`
    SELECT sequence, type, reason FROM transaction_events WHERE transaction_id = ${id}::uuid ORDER BY sequence`;
  return rows;
}

describe('POST /internal/transactions/{id}/status', () => {
  it('answers 401 without or with a wrong admin token, and changes nothing', async () => {
    const id = await newDeposit();
    expect((await move(id, { status: 'completed' }, null)).statusCode).toBe(401);
    expect((await move(id, { status: 'completed' }, 'wrong')).statusCode).toBe(401);
    expect((await move(id, { status: 'completed' }, '')).statusCode).toBe(401);
    expect(await eventTypes(id)).toHaveLength(1);
  });

  it('answers 400 for any other status value', async () => {
    const id = await newDeposit();
    for (const status of ['pending', 'done', 'COMPLETED', 1, null]) {
      const res = await move(id, { status });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    expect((await move('00000000-0000-4000-8000-000000000000', { status: 'completed' })).statusCode).toBe(404);
    expect((await move('nope', { status: 'completed' })).statusCode).toBe(400);
  });

  it('moves pending → processing → completed, writing an event with a growing sequence each time', async () => {
    const id = await newDeposit();
    const p = await move(id, { status: 'processing' });
    expect(p.statusCode).toBe(200);
    expect(p.json()).toMatchObject({ id, status: 'processing' });
    const c = await move(id, { status: 'completed', reason: 'bank confirmed' });
    expect(c.statusCode).toBe(200);
    expect(c.json().status).toBe('completed');
    expect(await eventTypes(id)).toEqual([
      { sequence: 1, type: 'deposit.pending', reason: null },
      { sequence: 2, type: 'deposit.processing', reason: null },
      { sequence: 3, type: 'deposit.completed', reason: 'bank confirmed' },
    ]);
  });

  it('moves pending directly to completed or failed', async () => {
    expect((await move(await newDeposit(), { status: 'completed' })).json().status).toBe('completed');
    expect((await move(await newDeposit(), { status: 'failed' })).json().status).toBe('failed');
  });

  it.each([
    ['processing', 'processing', 'processing'],
    ['completed', 'processing', 'completed'],
    ['completed', 'failed', 'completed'],
    ['failed', 'completed', 'failed'],
    ['failed', 'processing', 'failed'],
  ])('refuses %s → %s with 409 invalid_transition (from %s)', async (first, second) => {
    const id = await newDeposit();
    if (first === 'processing') await move(id, { status: 'processing' });
    else await move(id, { status: first });
    const before = await eventTypes(id);
    const res = await move(id, { status: second });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('invalid_transition');
    expect(await eventTypes(id)).toEqual(before);
  });

  it('lets only one of two simultaneous final moves win', async () => {
    const id = await newDeposit();
    const [a, b] = await Promise.all([move(id, { status: 'completed' }), move(id, { status: 'failed' })]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 409]);
    expect(await eventTypes(id)).toHaveLength(2);
  });
});

describe('without ADMIN_TOKEN configured', () => {
  it('keeps the operator API closed', async () => {
    const closed = await startTestService('operator-closed', { adminToken: undefined });
    try {
      const res = await closed.app.inject({
        method: 'POST',
        url: '/internal/transactions/00000000-0000-4000-8000-000000000000/status',
        headers: { 'x-admin-token': '' },
        payload: { status: 'completed' },
      });
      expect(res.statusCode).toBe(401);
    } finally {
      await closed.close();
    }
  });
});
