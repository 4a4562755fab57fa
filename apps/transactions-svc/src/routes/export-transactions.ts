/**
 * GET /api/transactions/export: every transaction matching the list's filters (limit and cursor
 * do not apply; a cursor this API did not issue is still a 400, bad-cursor.ts), as NDJSON, one ExportRow a line, streamed. The ui turns it into the merchant's
 * CSV. More than EXPORT_MAX_ROWS matching is refused up front with a 400, before anything streams.
 *
 * Bounded (docs/api.md, "Fair use: what one merchant's requests may hold"): a few downloads per
 * merchant and per process, shared with the statement (429 rate_limited with Retry-After beyond
 * them, download-slot.ts), pages sized in bytes,
 * reads on a pool of their own, and a response buffer of EXPORT_BUFFER_BYTES. A reader that stops
 * reading is cut off by the connection's stall timeout (libs/http-kit create-service.ts), which
 * ends the export.
 */
import { Readable } from 'node:stream';
import { EXPORT_MAX_ROWS, Problem, ViewTransactionQuery } from '@dw/contracts';
import { validationFailed, type InProgressSlots } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { decodeCursor } from '../domain/cursor';
import { countUpToLimit, ExportTooLargeError, exportRows } from '../domain/transaction-export';
import { badCursor } from './bad-cursor';
import { holdDownloadSlot } from './download-slot';
import { refuseEmptyWindow } from './time-range';

export const NDJSON = 'application/x-ndjson';

/** Bytes of NDJSON the response buffers ahead of the socket (about one of the largest rows). */
const EXPORT_BUFFER_BYTES = 64 * 1024;

export interface ExportSettings {
  /** The pool the exports read on (EXPORT_DATABASE_POOL_SIZE), apart from creates and reads. */
  db: pg.Pool;
  /** The process's download slots, shared with the statement (balances.ts). */
  slots: InProgressSlots;
  /** EXPORT_PAGE_BYTES */
  pageBytes: number;
}

export const DEFAULT_EXPORT_PAGE_BYTES = 1_048_576;

export function exportTransactionRoutes(app: FastifyInstance, settings: ExportSettings): void {
  const { db, slots } = settings;

  app.get<{ Querystring: ViewTransactionQuery }>(
    '/api/transactions/export',
    { schema: { querystring: ViewTransactionQuery, response: { '4xx': Problem } } },
    async (request, reply) => {
      const { merchantId, query } = request;
      refuseEmptyWindow(query);
      if (query.cursor !== undefined && !decodeCursor(query.cursor)) throw badCursor();
      holdDownloadSlot(slots, merchantId, reply);
      const { count, asOf } = await countUpToLimit(db, merchantId, query);
      if (count > EXPORT_MAX_ROWS) {
        const message = `more than ${EXPORT_MAX_ROWS} transactions match: narrow the filters (from, to, type, status)`;
        throw validationFailed([{ path: 'querystring', message }], `The export holds at most ${EXPORT_MAX_ROWS} rows; ${message}.`);
      }
      const log = request.log;
      const lines = Readable.from(
        (async function* () {
          try {
            for await (const row of exportRows(db, merchantId, query, { asOf, pageBytes: settings.pageBytes })) yield `${JSON.stringify(row)}\n`;
          } catch (err) {
            // The response ends without its last chunk: the ui's CSV ends abruptly, never looking complete.
            if (err instanceof ExportTooLargeError) log.warn({ err }, 'export passed its cap while streaming; ended unfinished');
            throw err;
          }
        })(),
        { objectMode: false, highWaterMark: EXPORT_BUFFER_BYTES },
      );
      return reply.type(NDJSON).header('cache-control', 'no-store').send(lines);
    },
  );
}
