/**
 * The statement (the balance history) as RFC 4180 CSV through csv-stringify, streamed. Amounts
 * are signed here ("-100.50"), so csv-stringify's escape_formulas, which would prefix a quote to
 * every negative number, is not used: the only free text, reason and reference, is neutralised
 * cell by cell instead (a leading = + - @ tab or CR gets a quote, as escape_formulas does).
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import type { BalanceEntry } from '@dw/contracts';
import { stringify } from 'csv-stringify';

export const STATEMENT_CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

const text = (value: string | null) => (value && /^[=+\-@\t\r]/.test(value) ? `'${value}` : (value ?? ''));

const COLUMNS: [string, (e: BalanceEntry) => string][] = [
  ['id', (e) => e.id],
  ['createdAt', (e) => e.createdAt],
  ['currency', (e) => e.currency],
  ['kind', (e) => e.kind],
  ['availableChange', (e) => e.change.available],
  ['heldChange', (e) => e.change.held],
  ['incomingChange', (e) => e.change.incoming],
  ['available', (e) => e.available],
  ['held', (e) => e.held],
  ['incoming', (e) => e.incoming],
  ['transactionId', (e) => e.transactionId ?? ''],
  ['reason', (e) => text(e.reason)],
  ['reference', (e) => text(e.reference)],
];

export function statementCsv(entries: Readable): Readable {
  const csv = stringify({ header: true, columns: COLUMNS.map(([name]) => name), record_delimiter: 'windows', quoted_match: /[\r\n]/ });
  const records = new Transform({
    objectMode: true,
    transform(entry: BalanceEntry, _encoding, done) {
      done(null, COLUMNS.map(([, cell]) => cell(entry)));
    },
  });
  return pipeline(entries, records, csv, () => undefined);
}
