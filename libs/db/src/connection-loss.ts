/**
 * Whether a failed query failed because the way to PostgreSQL went (a connection refused, reset or
 * timed out, a session the server ended, a server starting or stopping) rather than because of the
 * statement itself: the same statement, sent again once the database answers, may well succeed.
 * SQLSTATE class 08 is "connection exception"; 57P01–57P03 are the server's shutdowns and
 * start-up; pg reports a session that ended under it, and its own connect timeout, without a code.
 */
import { types } from 'node:util';

const LOST_WITHOUT_A_CODE = /^Connection terminated|^timeout exceeded when trying to connect|not queryable/;

export function isConnectionLoss(err: unknown): boolean {
  // isNativeError: a socket's error may come from another realm (a test runner's) than this module.
  if (!(err instanceof Error) && !types.isNativeError(err)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code.startsWith('08') || /^57P0[123]$/.test(code) || /^E[A-Z]+$/.test(code);
  return LOST_WITHOUT_A_CODE.test(err.message);
}

/** Waits between tries of a statement while the way to PostgreSQL is lost (for retryOn's `delaysMs`). */
export const CONNECTION_LOSS_DELAYS_MS: readonly number[] = [100, 200, 400, 800, 1_600];
