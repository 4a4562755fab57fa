/**
 * A deadline on an upstream request from the moment it is made until its answer's headers arrive,
 * waiting in the pool's queue included. undici's headersTimeout starts only once the request is
 * written to a connection: while every connection of a pool was held (by downloads nobody read, say)
 * a queued request waited for good, and every merchant's /ui calls with it. Past the deadline the
 * request fails (the caller answers 503); once the headers are in, the body streams under the
 * pool's bodyTimeout and the connection's stall timeout instead.
 */

export class UpstreamDeadlineError extends Error {
  readonly code = 'DW_UPSTREAM_DEADLINE';
  constructor(ms: number) {
    super(`no answer from the upstream within ${ms} ms (queue included)`);
  }
}

type Callback = (err: Error | null, data?: unknown) => void;
interface Requestable {
  request(opts: object, callback?: Callback): unknown;
}

/**
 * Wraps `pool.request` (undici's Pool or Client: promise and callback forms) so that each request
 * carries an abort signal that fires `deadlineMs` after the call unless its headers came first.
 * A signal the caller passed still works beside it.
 */
export function withHeadersDeadline<P extends Requestable>(pool: P, deadlineMs: number): P {
  const request = pool.request.bind(pool) as (opts: object, callback?: Callback) => unknown;
  const deadlined = (opts: object & { signal?: AbortSignal }, callback?: Callback): unknown => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new UpstreamDeadlineError(deadlineMs)), deadlineMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, controller.signal]) : controller.signal;
    if (typeof callback === 'function') {
      return request({ ...opts, signal }, (err, data) => {
        clearTimeout(timer);
        callback(err, data);
      });
    }
    return (request({ ...opts, signal }) as Promise<unknown>).finally(() => clearTimeout(timer));
  };
  pool.request = deadlined as P['request'];
  return pool;
}
