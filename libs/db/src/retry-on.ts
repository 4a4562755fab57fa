/**
 * Runs a statement again while it fails in a way that sending it again may mend: a deadlock
 * PostgreSQL broke (isDeadlock), the way to the server lost (isConnectionLoss). One loop for both;
 * each caller says which failures, how many tries or how long, and the waits between them.
 */
export interface RetryOn {
  /** The failures worth another try; any other is thrown at once. */
  when: (err: unknown) => boolean;
  /** Tries in all, the first included (default: no bound but `withinMs`). */
  tries?: number;
  /** Give up (throw the last error) once the next try would start this long after the first. */
  withinMs?: number;
  /** The waits between tries, the last repeated (default: none). */
  delaysMs?: readonly number[];
}

/**
 * `run`, tried again while it fails as `when` says, within `tries` and `withinMs`. Only for work
 * that is safe to repeat: after a connection loss the first try may have committed with only its
 * reply lost.
 */
export async function retryOn<T>(run: () => Promise<T>, { when, tries = Infinity, withinMs = Infinity, delaysMs = [0] }: RetryOn): Promise<T> {
  const giveUpAt = Date.now() + withinMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      const waitMs = delaysMs[Math.min(attempt - 1, delaysMs.length - 1)] ?? 0;
      if (!when(err) || attempt >= tries || Date.now() + waitMs > giveUpAt) throw err;
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/** PostgreSQL ended this statement's transaction to break a deadlock (SQLSTATE 40P01): it changed nothing. */
export function isDeadlock(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '40P01';
}
