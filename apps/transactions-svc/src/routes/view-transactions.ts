/** Merchant-scoped reads used by the ui service for /ui/viewTransaction. */
import { Problem, TransactionDetail, TransactionIdParams, TransactionPage, ViewTransactionQuery } from '@dw/contracts';
import { notFound, validationFailed } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { BadCursorError, listTransactions, transactionDetail } from '../domain/transaction-queries';

export function viewTransactionRoutes(app: FastifyInstance, db: pg.Pool): void {
  app.get<{ Querystring: ViewTransactionQuery }>(
    '/api/transactions',
    { schema: { querystring: ViewTransactionQuery, response: { 200: TransactionPage, '4xx': Problem } } },
    async (request) => {
      try {
        return await listTransactions(db, request.merchantId, request.query);
      } catch (err) {
        if (err instanceof BadCursorError) {
          throw validationFailed([{ path: 'querystring:/cursor', message: 'is not a cursor this API issued' }]);
        }
        throw err;
      }
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/transactions/:id',
    { schema: { params: TransactionIdParams, response: { 200: TransactionDetail, '4xx': Problem } } },
    async (request) => {
      const detail = await transactionDetail(db, request.merchantId, request.params.id);
      if (!detail) throw notFound('No transaction with this id.');
      return detail;
    },
  );
}
