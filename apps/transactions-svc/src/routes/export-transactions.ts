/**
 * GET /api/transactions/export: every transaction matching the list's filters (limit and cursor
 * do not apply), as NDJSON, one ExportRow a line, streamed. The ui turns it into the merchant's
 * CSV. More than EXPORT_MAX_ROWS matching is refused up front with a 400, before anything streams.
 */
import { Readable } from 'node:stream';
import { EXPORT_MAX_ROWS, Problem, ViewTransactionQuery } from '@dw/contracts';
import { validationFailed } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import { countUpToLimit, exportRows } from '../domain/transaction-export';
import type pg from 'pg';

export const NDJSON = 'application/x-ndjson';

export function exportTransactionRoutes(app: FastifyInstance, db: pg.Pool): void {
  app.get<{ Querystring: ViewTransactionQuery }>(
    '/api/transactions/export',
    { schema: { querystring: ViewTransactionQuery, response: { '4xx': Problem } } },
    async (request, reply) => {
      const { merchantId, query } = request;
      if ((await countUpToLimit(db, merchantId, query)) > EXPORT_MAX_ROWS) {
        const message = `more than ${EXPORT_MAX_ROWS} transactions match: narrow the filters (from, to, type, status)`;
        throw validationFailed([{ path: 'querystring', message }], `The export holds at most ${EXPORT_MAX_ROWS} rows; ${message}.`);
      }
      const lines = Readable.from(
        (async function* () {
          for await (const row of exportRows(db, merchantId, query)) yield `${JSON.stringify(row)}\n`;
        })(),
      );
      return reply.type(NDJSON).header('cache-control', 'no-store').send(lines);
    },
  );
}
