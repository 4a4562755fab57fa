import {
  CreateDepositBody,
  CreateWithdrawBody,
  HEADER_IDEMPOTENT_REPLAYED,
  Problem,
  Transaction,
  type TransactionTypeName,
} from '@dw/contracts';
import { conflict, insufficientFunds, validationFailed } from '@dw/http-kit';
import { currentTraceparent } from '@dw/telemetry';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { MAX_CURRENCIES_PER_MERCHANT } from '../domain/currency-cap';
import { createTransaction } from '../domain/transactions-repo';

type CreateBody = CreateDepositBody & { destination?: string };

export function createTransactionRoutes(app: FastifyInstance, db: pg.Pool): void {
  const route = (path: string, type: TransactionTypeName, body: typeof CreateDepositBody | typeof CreateWithdrawBody) =>
    app.post<{ Body: CreateBody }>(
      path,
      {
        schema: {
          body,
          response: { 200: Transaction, 201: Transaction, '4xx': Problem },
        },
      },
      async (request, reply) => {
        const b = request.body;
        const outcome = await createTransaction(db, {
          merchantId: request.merchantId,
          type,
          amount: b.amount,
          currency: b.currency,
          orderId: b.orderId,
          description: b.description ?? null,
          metadata: b.metadata ?? {},
          destination: b.destination ?? null,
          traceparent: currentTraceparent() ?? null,
        });
        if (outcome.kind === 'insufficient_funds') {
          throw insufficientFunds(
            `Insufficient funds in ${b.currency}: the withdraw asks ${outcome.asked} and at most ${outcome.withdrawable} ${b.currency} can be withdrawn now (available + credit limit). Nothing was created; the same orderId can be used again once funds arrive.`,
          );
        }
        if (outcome.kind === 'currency_limit') {
          throw validationFailed(
            [{ path: '/currency', message: `is a currency you hold no balance in, and you already hold balances in ${MAX_CURRENCIES_PER_MERCHANT} currencies, the most one merchant may` }],
            `You already hold balances in ${MAX_CURRENCIES_PER_MERCHANT} currencies, the most one merchant may: use one of them. Nothing was created.`,
          );
        }
        if (outcome.kind === 'conflict') {
          throw conflict(
            `orderId ${JSON.stringify(b.orderId)} is already used by ${type} ${outcome.transaction.id} with different fields.`,
          );
        }
        if (outcome.kind === 'replayed') {
          return reply.code(200).header(HEADER_IDEMPOTENT_REPLAYED, 'true').send(outcome.transaction);
        }
        return reply.code(201).send(outcome.transaction);
      },
    );

  route('/api/createDeposit', 'deposit', CreateDepositBody);
  route('/api/createWithdraw', 'withdraw', CreateWithdrawBody);
}
