import { BODY, serviceUnavailable, validationFailed, type ApiError } from '@dw/http-kit';

// pg's and pg-pool's own words for a database that cannot be reached or is going away.
const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection terminated|connection timeout|timeout exceeded when trying to connect|the database system is (starting up|shutting down)|terminating connection/i;

/** SQLSTATE class 22, "data exception": 22P02 invalid text, 22007/22008 bad dates, 22021, 22P05 … */
const DATA_EXCEPTION = /^22[0-9A-Z]{3}$/;

/**
 * A lost database connection is a 503 (retry later), not a 500. A value PostgreSQL refuses as
 * data (SQLSTATE class 22, pg's `code`) is the client's input: a 400. This is the last line of
 * defence only; the request schemas (@dw/contracts) refuse such input first and name the field,
 * so reaching it means a schema missed a rule (the problem handler logs it as a warning).
 */
export function mapDatabaseError(error: unknown): ApiError | undefined {
  const e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  const text = [e?.code, e?.message, (e?.cause as { message?: unknown } | undefined)?.message, String(e?.cause ?? '')]
    .filter((x) => typeof x === 'string')
    .join(' ');
  if (UNREACHABLE.test(text)) return serviceUnavailable('The database is unavailable; retry later.');
  const sqlState = typeof e?.code === 'string' ? e.code : undefined;
  if (sqlState !== undefined && DATA_EXCEPTION.test(sqlState)) {
    return validationFailed(
      [{ path: BODY, message: `contains a value the database cannot store (SQLSTATE ${sqlState})` }],
      'The request contains a value the database refuses; see errors.',
    );
  }
  return undefined;
}
