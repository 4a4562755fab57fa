/** Merchant-scoped reads used by the ui service for /ui/viewTransaction. */
import { Problem, TransactionDetail, TransactionIdParams, TransactionPage, ViewTransactionQuery } from '@dw/contracts';
import { notFound } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type pg from 'pg';
import { BadCursorError, listTransactions, transactionDetail } from '../domain/transaction-queries';
import { badCursor } from './bad-cursor';
import { refuseEmptyWindow } from './time-range';

/** Characters of a page written between turns of the event loop. */
const SLICE = 64 * 1024;

/**
 * A page as JSON, written a slice at a time with a turn of the event loop between slices: a page of
 * 100 of the largest rows is 3.3 MB, and serialised in one piece it held the event loop (and every
 * other merchant's create behind it) for its whole length. Beside a merchant reading such pages at
 * its pace (GATEWAY_MERCHANT_VIEW_BYTES_PER_SECOND), another merchant's creates took p99 40-45 ms
 * with the page in one piece and 23-29 ms in slices (12-14 alone; docs/benchmarks.md). The document
 * is the one the response schema's serialiser wrote: the same keys, in the schema's order, as
 * transactionJson builds them.
 */
async function* pageInSlices(page: TransactionPage): AsyncGenerator<string> {
  let slice = '{"items":[';
  for (const [i, item] of page.items.entries()) {
    slice += (i === 0 ? '' : ',') + JSON.stringify(item);
    if (slice.length >= SLICE) {
      yield slice;
      slice = '';
      await nextTurn();
    }
  }
  yield `${slice}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
}

export function viewTransactionRoutes(app: FastifyInstance, db: pg.Pool): void {
  app.get<{ Querystring: ViewTransactionQuery }>(
    '/api/transactions',
    { schema: { querystring: ViewTransactionQuery, response: { 200: TransactionPage, '4xx': Problem } } },
    async (request, reply) => {
      refuseEmptyWindow(request.query);
      try {
        const page = await listTransactions(db, request.merchantId, request.query);
        return reply.type('application/json; charset=utf-8').send(Readable.from(pageInSlices(page)));
      } catch (err) {
        if (err instanceof BadCursorError) {
          throw badCursor();
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
