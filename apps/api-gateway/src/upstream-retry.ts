/**
 * When the gateway tries a forwarded request a second time: only after a connection error, once,
 * and only soon after it began. Never on an answer, 503 included: reply-from's default retried a GET
 * answered 503 up to 10 times, so one merchant request became 11 against a service that had just
 * said it could not cope, and an outage became a storm. A connection error is different: a pooled
 * keep-alive connection the service had just closed, or a replica restarting, fails at once and
 * costs nothing to try again.
 */

/** The upstream refused the connection: nothing was sent, any method may go again. */
const NOTHING_SENT = new Set(['ECONNREFUSED']);
/** The connection broke: the request may have been received, so only a method safe to repeat goes again. */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** A retry is made only if the first attempt failed within this long (so a retry never doubles a wait). */
export const RETRY_WITHIN_MS = 1_000;
/** The pause before the one retry: long enough for a restarting replica's port to answer again. */
export const RETRY_DELAY_MS = 100;

export interface Attempt {
  method: string;
  /** The attempt that just ended, counted from 0. */
  attempt: number;
  /** The error, when no answer came. */
  err?: { code?: string } | null;
  /** The answer, when one came: never retried. */
  answered: boolean;
  /** Since the first attempt began. */
  elapsedMs: number;
}

/** The delay before trying again, or null for no retry. */
export function retryDelayFor({ method, attempt, err, answered, elapsedMs }: Attempt): number | null {
  if (answered || !err || attempt > 0 || elapsedMs > RETRY_WITHIN_MS) return null;
  const code = err.code ?? '';
  if (NOTHING_SENT.has(code)) return RETRY_DELAY_MS;
  if (CONNECTION_LOST.has(code) && SAFE_METHODS.has(method)) return RETRY_DELAY_MS;
  return null;
}
