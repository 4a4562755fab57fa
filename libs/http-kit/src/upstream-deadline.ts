/**
 * A deadline on an upstream request from the moment it is made until its answer's headers arrive,
 * waiting in the pool's queue included. undici's headersTimeout starts only once the request is
 * written to a connection: while every connection of a pool was held (by downloads nobody read, say)
 * a queued request waited for good, and every merchant's /ui calls with it. Past the deadline the
 * request fails (the caller answers 503); once the headers are in, the body streams under the
 * pool's bodyTimeout and the connection's stall timeout instead.
 */
import { EventEmitter } from 'node:events';

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

/** An answer that came after the caller was already told the deadline passed: its body is let go. */
function discard(data: unknown): void {
  (data as { body?: { destroy?: () => void } } | undefined)?.body?.destroy?.();
}

/**
 * Wraps `pool.request` (undici's Pool or Client: promise and callback forms) so that each request
 * fails `deadlineMs` after the call unless its headers came first. At the deadline the caller is
 * answered at once and the request's signal aborts: undici acts on an abort only when the request
 * reaches a connection, so a request queued behind connections held by slow bodies (which the
 * deadline does not cut) would otherwise wait for one of them to end. An answer that still comes
 * after the deadline is discarded. A signal the caller passed still works beside it.
 */
export function withHeadersDeadline<P extends Requestable>(pool: P, deadlineMs: number): P {
  const request = pool.request.bind(pool) as (opts: object, callback?: Callback) => unknown;
  const deadlined = (opts: object & { signal?: AbortSignal }, callback?: Callback): unknown => {
    const abort = deadlineAbort(opts.signal);
    let settled = false;
    let onDeadline: (err: Error) => void = () => undefined;
    const timer = setTimeout(() => {
      const err = new UpstreamDeadlineError(deadlineMs);
      abort.fire(err);
      if (!settled) {
        settled = true;
        onDeadline(err);
      }
    }, deadlineMs);
    const settle = (answer: () => void, data?: unknown): void => {
      clearTimeout(timer);
      if (settled) return discard(data);
      settled = true;
      answer();
    };
    if (typeof callback === 'function') {
      onDeadline = (err) => callback(err);
      return request({ ...opts, signal: abort.signal }, (err, data) => settle(() => callback(err, data), data));
    }
    return new Promise((resolve, reject) => {
      onDeadline = reject;
      (request({ ...opts, signal: abort.signal }) as Promise<unknown>).then(
        (data) => settle(() => resolve(data), data),
        (err: unknown) => settle(() => reject(err)),
      );
    });
  };
  pool.request = deadlined as P['request'];
  return pool;
}

/**
 * The signal undici is handed, and how the deadline fires it. Without a signal of the caller's it
 * is an EventEmitter, which undici takes as a signal as well (its `request` options: "AbortSignal |
 * EventEmitter"), and far lighter than an AbortController and its EventTarget listener, made once
 * per forwarded request by the gateway (with forwarding.ts's header copies, its allocation per
 * request went from 49.4 to 47.2 KB; docs/benchmarks.md). With a caller's signal, both are combined
 * by AbortSignal.any.
 */
function deadlineAbort(callers: AbortSignal | undefined): { signal: AbortSignal | EventEmitter; fire(err: Error): void } {
  if (!callers) {
    const emitter = new EventEmitter();
    return { signal: emitter, fire: () => emitter.emit('abort') };
  }
  const controller = new AbortController();
  return { signal: AbortSignal.any([callers, controller.signal]), fire: (err) => controller.abort(err) };
}
