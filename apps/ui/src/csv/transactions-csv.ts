/**
 * The reconciliation export as RFC 4180 CSV (CRLF line ends, fields quoted when they hold a comma,
 * quote or line break, quotes doubled) through csv-stringify, a streaming Transform. Its
 * `escape_formulas` prefixes `'` to any cell starting with = + - @ tab or CR, so a hostile orderId
 * or description cannot run as a formula in a spreadsheet; amounts have no sign, so they stay exact.
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import type { ExportRow } from '@dw/contracts';
import { stringify } from 'csv-stringify';

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

/** Column header → the cell of one row. Amounts are the decimal strings as stored. */
const CSV_COLUMNS: [string, (row: ExportRow) => string | null][] = [
  ['id', (r) => r.transaction.id],
  ['type', (r) => r.transaction.type],
  ['status', (r) => r.transaction.status],
  ['amount', (r) => r.transaction.amount],
  ['currency', (r) => r.transaction.currency],
  ['orderId', (r) => r.transaction.orderId],
  ['description', (r) => r.transaction.description],
  ['destination', (r) => r.transaction.destination],
  ['metadata', (r) => JSON.stringify(r.transaction.metadata)],
  ['createdAt', (r) => r.transaction.createdAt],
  ['updatedAt', (r) => r.transaction.updatedAt],
  ['lastEventId', (r) => r.lastEventId],
  ['lastEventType', (r) => r.lastEventType],
  ['deliveryStatus', (r) => r.deliveryStatus],
  ['deliveryAttempts', (r) => String(r.deliveryAttempts)],
  ['acknowledgedAt', (r) => r.acknowledgedAt],
];

/**
 * A byte stream of the CSV: the header line, then one line per row as the rows arrive. One
 * pipeline of plain streams from `rows` to the CSV, so destroying either end destroys the other:
 * an upstream failure mid-stream ends the response abruptly (no final CRLF), never as a file that
 * looks complete; and a client that goes away (Fastify destroys the CSV stream) destroys `rows`
 * and so the upstream body. No async generator stage: a generator waiting for its next row cannot
 * be stopped, so a merchant who left while the upstream was between chunks held a connection to
 * transactions-svc (and the ui's shutdown) until that chunk came.
 */
export function transactionsCsv(rows: Readable): Readable {
  const csv = stringify({
    header: true,
    columns: CSV_COLUMNS.map(([name]) => name),
    record_delimiter: 'windows',
    escape_formulas: true,
    // RFC 4180: a field holding CR or LF is quoted. csv-stringify 6.9 quotes LF and CRLF but not a
    // lone CR (a test caught it), so any line-break character forces quotes.
    quoted_match: /[\r\n]/,
  });
  const records = new Transform({
    objectMode: true,
    highWaterMark: 1, // one row at a time (up to 48 KB each): the CSV's own buffer is the slack

    transform(row: ExportRow, _encoding, done) {
      done(null, CSV_COLUMNS.map(([, cell]) => cell(row) ?? ''));
    },
  });
  // Errors reach Fastify through the CSV stream itself: the callback has nothing left to do.
  return pipeline(rows, records, csv, () => undefined);
}
