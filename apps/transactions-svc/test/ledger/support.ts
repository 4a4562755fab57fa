/** What the ledger's tests share: merchants with a chosen credit limit, funding, and the balance read. */
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, insertMerchant, type TestService } from '../support/service';

let n = 0;
export const orderId = (label = 'order') => `${label}-${Date.now()}-${++n}`;

export function ledgerClient(svc: TestService) {
  const create = (merchant: string, type: 'deposit' | 'withdraw', amount: string, currency = 'USD', id = orderId(type)) =>
    svc.as(merchant, {
      method: 'POST',
      url: type === 'deposit' ? '/api/createDeposit' : '/api/createWithdraw',
      payload: type === 'deposit' ? { amount, currency, orderId: id } : { amount, currency, orderId: id, destination: 'acct-9' },
    });
  const setStatus = (id: string, status: 'processing' | 'completed' | 'failed') =>
    svc.app.inject({ method: 'POST', url: `/internal/transactions/${id}/status`, headers: { 'x-admin-token': ADMIN_TOKEN }, payload: { status } });

  return {
    create,
    setStatus,
    merchant: (creditLimit = '0') => insertMerchant(svc.db, 'Ledger merchant', creditLimit),
    /** A completed deposit: `amount` becomes available. */
    async fund(merchant: string, amount: string, currency = 'USD'): Promise<void> {
      const res = await create(merchant, 'deposit', amount, currency);
      expect(res.statusCode).toBe(201);
      expect((await setStatus(res.json().id, 'completed')).statusCode).toBe(200);
    },
    async balance(merchant: string, currency = 'USD') {
      const res = await svc.as(merchant, { method: 'GET', url: '/api/getBalance' });
      expect(res.statusCode).toBe(200);
      return (res.json().balances as Record<string, string>[]).find((b) => b.currency === currency);
    },
    history: (merchant: string, query = '') => svc.as(merchant, { method: 'GET', url: `/api/getBalanceHistory${query}` }),
  };
}

export const problemOf = (res: LightMyRequestResponse) => res.json() as { code: string; detail: string; status: number };
