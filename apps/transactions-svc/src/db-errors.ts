import { serviceUnavailable, validationFailed, type ApiError } from '@dw/http-kit';

const UNREACHABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection terminated|connection timeout|timeout exceeded when trying to connect|DatabaseNotReachable|Can't reach database|the database system is (starting up|shutting down)|terminating connection/i;

/** SQLSTATE class 22, "data exception": 22P02 invalid text, 22007/22008 bad dates, 22021, 22P05 … */
const DATA_EXCEPTION = /^22[0-9A-Z]{3}$/;
const SQLSTATE_IN_TEXT = /\bCode: `(22[0-9A-Z]{3})`/;

/**
 * The SQLSTATE of a PostgreSQL error however Prisma wraps it: `meta.code` of a raw query's P2010,
 * the driver adapter's `cause.originalCode`, pg's own `code`, or the "Code: `…`" of the message.
 */
function sqlStateOf(error: unknown, depth = 0): string | undefined {
  if (error === null || typeof error !== 'object' || depth > 4) return undefined;
  const e = error as Record<string, unknown>;
  for (const key of ['originalCode', 'code']) {
    const value = e[key];
    if (typeof value === 'string' && /^[0-9A-Z]{5}$/.test(value) && !value.startsWith('P')) return value;
  }
  for (const key of ['meta', 'cause', 'driverAdapterError']) {
    const nested = sqlStateOf(e[key], depth + 1);
    if (nested) return nested;
  }
  return typeof e.message === 'string' ? SQLSTATE_IN_TEXT.exec(e.message)?.[1] : undefined;
}

/**
 * A lost database connection is a 503 (retry later), not a 500. A value PostgreSQL refuses as
 * data (SQLSTATE class 22) is the client's input: a 400. This is the last line of defence only;
 * the request schemas (@dw/contracts) refuse such input first and name the field, so reaching it
 * means a schema missed a rule (the problem handler logs it as a warning).
 */
export function mapDatabaseError(error: unknown): ApiError | undefined {
  const e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  const text = [e?.code, e?.message, (e?.cause as { message?: unknown } | undefined)?.message, String(e?.cause ?? '')]
    .filter((x) => typeof x === 'string')
    .join(' ');
  if (/^P10(01|02|08|17)$/.test(String(e?.code)) || UNREACHABLE.test(text)) {
    return serviceUnavailable('The database is unavailable; retry later.');
  }
  const sqlState = sqlStateOf(error);
  if (sqlState !== undefined && DATA_EXCEPTION.test(sqlState)) {
    return validationFailed(
      [{ path: '/', message: `contains a value the database cannot store (SQLSTATE ${sqlState})` }],
      'The request contains a value the database refuses; see errors.',
    );
  }
  return undefined;
}
