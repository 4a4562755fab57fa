/**
 * GET /api/getBalance and GET /api/getBalanceHistory (docs/api.md, "Balances and the ledger"). The
 * history answers JSON pages, or where `Accept` prefers `text/csv` (negotiate.ts, as for the transaction list) every matching entry as CSV (the
 * statement), a download bounded as the transactions export is: one of the merchant's download
 * slots (429 beyond them, download-slot.ts), reads on the downloads' pool, more than EXPORT_MAX_ROWS
 * matching refused up front with a 400, and a reader that stops reading cut off by the
 * connection's stall timeout.
 */
import { Readable } from 'node:stream';
import { BalanceHistoryPage, BalanceHistoryQuery, BalanceList, EXPORT_MAX_ROWS, Problem } from '@dw/contracts';
import { negotiate, validationFailed, type InProgressSlots } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { balanceHistory, balancesOf, countHistoryUpTo, decodeHistoryCursor, historyEntries } from '../domain/balance-queries';
import { BadCursorError } from '../domain/cursor';
import { statementCsv, STATEMENT_CSV_CONTENT_TYPE } from '../domain/statement-csv';
import { badCursor } from './bad-cursor';
import { holdDownloadSlot } from './download-slot';
import { refuseEmptyWindow } from './time-range';

/** `downloads`: the pool statements read on and the slots they share with the transactions export. */
export function balanceRoutes(app: FastifyInstance, db: pg.Pool, downloads: { db: pg.Pool; slots: InProgressSlots }): void {
  app.get('/api/getBalance', { schema: { response: { 200: BalanceList, '4xx': Problem } } }, (request) =>
    balancesOf(db, request.merchantId),
  );

  app.get<{ Querystring: BalanceHistoryQuery }>(
    '/api/getBalanceHistory',
    { schema: { querystring: BalanceHistoryQuery, response: { 200: BalanceHistoryPage, '4xx': Problem } } },
    async (request, reply) => {
      const { merchantId, query } = request;
      refuseEmptyWindow(query);
      try {
        if (negotiate(request.headers.accept) !== 'csv') return await balanceHistory(db, merchantId, query);
        // A download is never paged: the cursor does not apply, but one this API did not issue is refused.
        if (query.cursor !== undefined) decodeHistoryCursor(query.cursor);
        holdDownloadSlot(downloads.slots, merchantId, reply);
        if ((await countHistoryUpTo(downloads.db, merchantId, query, EXPORT_MAX_ROWS)) > EXPORT_MAX_ROWS) {
          const message = `more than ${EXPORT_MAX_ROWS} entries match: narrow the filters (currency, from, to)`;
          throw validationFailed([{ path: 'querystring', message }], `The statement holds at most ${EXPORT_MAX_ROWS} rows; ${message}.`);
        }
      } catch (err) {
        throw err instanceof BadCursorError ? badCursor() : err;
      }
      const rows = Readable.from(historyEntries(downloads.db, merchantId, query, EXPORT_MAX_ROWS));
      return reply
        .type(STATEMENT_CSV_CONTENT_TYPE)
        .header('cache-control', 'no-store')
        .header('content-disposition', 'attachment; filename="statement.csv"')
        .send(statementCsv(rows));
    },
  );
}

