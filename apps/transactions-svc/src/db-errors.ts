import { serviceUnavailable, type ApiError } from '@dw/http-kit';

const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection terminated|connection timeout|timeout exceeded when trying to connect|DatabaseNotReachable|Can't reach database|the database system is (starting up|shutting down)|terminating connection/i;

/** A lost database connection is a 503 (retry later), not a 500. */
export function mapDatabaseError(error: unknown): ApiError | undefined {
  const e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  const text = [e?.code, e?.message, (e?.cause as { message?: unknown } | undefined)?.message, String(e?.cause ?? '')]
    .filter((x) => typeof x === 'string')
    .join(' ');
  if (/^P10(01|02|08|17)$/.test(String(e?.code)) || UNREACHABLE.test(text)) {
    return serviceUnavailable('The database is unavailable; retry later.');
  }
  return undefined;
}
