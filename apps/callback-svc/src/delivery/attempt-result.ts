/** What one HTTP attempt came to: the row written to callback_attempts and the label for metrics. */
export type AttemptOutcome =
  /** status 200: the only success (docs/callbacks.md, rule 2) */
  | 'succeeded'
  /** any other status, 3xx included (redirects are not followed) */
  | 'http_status'
  /** no complete reply within CALLBACK_TIMEOUT_MS */
  | 'timeout'
  /** refused, reset, DNS failure, TLS failure … */
  | 'network_error'
  /** the host is or resolved to a non-public address while those are not allowed */
  | 'private_address'
  /** the request went out, then callback-svc stopped (SIGTERM) before the reply was complete */
  | 'aborted';

export interface AttemptResult {
  outcome: AttemptOutcome;
  url: string;
  /** When the attempt started. */
  at: Date;
  durationMs: number;
  /** The reply's status; null when there was no reply. */
  statusCode: number | null;
  /** Why the attempt failed when there is more to say than the status; never empty when set. */
  error: string | null;
}

/**
 * How a complete reply is judged by its status: 200 is the only success (docs/callbacks.md, rule 2);
 * any other status, another 2xx or a 3xx included, is an `http_status` failure.
 */
export function replyOutcome(statusCode: number | null): 'succeeded' | 'http_status' {
  return statusCode === 200 ? 'succeeded' : 'http_status';
}
