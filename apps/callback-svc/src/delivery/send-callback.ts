/**
 * Step 2 of an attempt: one signed POST with undici. One Agent for the process keeps a keep-alive
 * pool per origin; redirects are not followed (a dispatch never follows one), so a 3xx is just a
 * failed attempt. One timer bounds the whole exchange (connect, headers and body), and the
 * private-host guard runs where the socket is opened, on the addresses actually connected to.
 *
 * The request goes through undici's dispatch API with a handler of its own (`Exchange`): the reply
 * body is counted and thrown away as it arrives, with no stream, promise or AbortSignal per
 * attempt; that took the client's CPU per callback from about 33 to 19 µs (docs/decisions.md).
 *
 * Each attempt is a `POST` client span of the sender's own making (OpenTelemetry's undici
 * instrumentation did the same at about a tenth of the process's CPU per callback): method, host and
 * port, status and outcome, an error status when it is not a 200. The merchant's `traceparent` is
 * this span's. A URL that cannot be requested makes no span.
 *
 * `abortAll()` (SIGTERM, CALLBACK_TIMEOUT_MS being longer than SHUTDOWN_TIMEOUT_MS) cuts every
 * exchange in flight short. One whose request was written has reached, or may have reached, the
 * merchant: it is an attempt like any other and resolves with an `aborted` result (no status unless
 * the reply's head had come, an error saying we stopped). One still connecting has written nothing:
 * it is no attempt, and throws SendAbortedError so that nothing is recorded and the message goes
 * back to RabbitMQ for another replica to send in full. undici tells the two apart for us: it calls
 * the handler's onRequestStart on a connected socket in the same tick as it writes the request.
 */
import { performance } from 'node:perf_hooks';
import { failSpan, injectTraceHeaders, SpanKind, withSpan } from '@dw/telemetry';
import { assertPublicHost, ERR_PRIVATE_ADDRESS, guardedLookup } from '@dw/url-guard';
import { Agent, type Dispatcher } from 'undici';
import { replyOutcome, type AttemptOutcome, type AttemptResult } from './attempt-result';
import { webhookHeaders } from './sign-callback';

export const USER_AGENT = 'dw-callback-svc/1.0 (Standard Webhooks)';
/** A merchant's reply body is read and thrown away; past this size the connection is dropped instead. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Longest error text kept per attempt (a TLS or DNS error can be long). */
const MAX_ERROR_LENGTH = 500;
/** How long after the exchange's own timeout undici's timers would stop it, were ours ever missed. */
const BACKSTOP_MS = 1_000;
/**
 * How long the body of a reply that is not a 200 may take once its head has come. Its status has
 * decided the outcome (a failure); the body is read only so the connection can serve the next
 * attempt. A body that stalls past this is cut and the connection dropped, rather than holding the
 * merchant's slot until the timeout (found by an outside audit: a 500 that never finished its body
 * was recorded after 15 s, and its retry came 15 s late).
 */
const FAILED_REPLY_BODY_MS = 1_000;

export interface SenderOptions {
  timeoutMs: number;
  allowPrivateHosts: boolean;
}

export interface CallbackRequest {
  url: string;
  eventId: string;
  body: Buffer;
  /** The merchant's live secrets, newest first: one signature each. */
  signingSecrets: string[];
}

export interface CallbackSender {
  /**
   * Resolves with the attempt's result (`aborted` when `abortAll()` cut it short after its request
   * was written); rejects with SendAbortedError when it was cut short before, or began after.
   */
  send(request: CallbackRequest): Promise<AttemptResult>;
  /** Cuts every send in flight short and refuses new ones (shutdown). */
  abortAll(): void;
  /** Closes the connection pools: waits for the sends in flight, unless abortAll() was called. */
  close(): Promise<void>;
}

/**
 * A send cut short by the process shutting down before any byte of its request was written (or
 * refused because the process is shutting down): nothing reached the merchant, so it is not an
 * attempt and there is nothing to record.
 */
export class SendAbortedError extends Error {
  constructor(readonly eventId: string) {
    super('callback send aborted before its request was written: the process is shutting down');
    this.name = 'SendAbortedError';
  }
}

/** `judged`: a reply that is not a 200 whose body took longer than FAILED_REPLY_BODY_MS. */
type CutReason = 'timeout' | 'shutdown' | 'judged';

/** Why an exchange was cut short by us rather than by the network. */
class CutShort extends Error {
  constructor(readonly reason: CutReason) {
    super(reason === 'timeout' ? 'callback timeout' : reason === 'judged' ? 'reply judged by its status' : 'shutting down');
  }
}

/**
 * One HTTP exchange as an undici dispatch handler: it keeps the status, throws the body away (up to
 * MAX_RESPONSE_BYTES, then drops the connection), and settles once when the reply is complete or the
 * exchange fails. `cut` settles it at once and aborts it, whether or not undici has started it yet.
 */
class Exchange implements Dispatcher.DispatchHandler {
  statusCode: number | null = null;
  /** Set when the reply body went past MAX_RESPONSE_BYTES and the connection was dropped. */
  truncated = false;
  cutBy: CutReason | undefined;
  /**
   * Set once undici is writing the request: it calls onRequestStart on a connected socket and, unless
   * aborted right there, writes the headers and the body (one Buffer, one corked write) in the same
   * tick. Unset, not a byte of this request has left the process.
   */
  requestWritten = false;
  private controller: Dispatcher.DispatchController | undefined;
  private bytes = 0;
  /** Runs once a reply that is not a 200 has its head (FAILED_REPLY_BODY_MS). */
  judgeTimer: NodeJS.Timeout | undefined;
  private settle!: (err?: Error) => void;
  readonly done = new Promise<Error | undefined>((resolve) => (this.settle = resolve));

  cut(reason: CutReason): void {
    if (this.cutBy) return;
    this.cutBy = reason;
    const err = new CutShort(reason);
    // Not started yet (still connecting): it settles now, and is aborted the moment it would start.
    if (this.controller) this.controller.abort(err);
    else this.settle(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Aborted here, undici writes nothing (it checks right after this call).
    if (this.cutBy) controller.abort(new CutShort(this.cutBy));
    else this.requestWritten = true;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.statusCode = statusCode;
    if (statusCode !== 200) this.judgeTimer = setTimeout(() => this.cut('judged'), FAILED_REPLY_BODY_MS);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > MAX_RESPONSE_BYTES && !this.truncated) {
      this.truncated = true;
      controller.abort(new Error('reply body too large'));
    }
  }

  onResponseEnd(): void {
    this.settle();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.settle(err);
  }
}

export function createCallbackSender({ timeoutMs, allowPrivateHosts }: SenderOptions): CallbackSender {
  const agent = new Agent({
    connect: { lookup: guardedLookup(allowPrivateHosts), timeout: timeoutMs },
    // The exchange's own timer is the timeout. undici's header and body timers run on a coarse
    // clock (ticks of 499 ms) and can fire a few ms before CALLBACK_TIMEOUT_MS, cutting a reply
    // that was still in time and reporting it as a network error: they only back ours up here.
    headersTimeout: timeoutMs + BACKSTOP_MS,
    bodyTimeout: timeoutMs + BACKSTOP_MS,
  });
  const inFlight = new Set<Exchange>();
  let shuttingDown = false;

  async function send(request: CallbackRequest): Promise<AttemptResult> {
    if (shuttingDown) throw new SendAbortedError(request.eventId);
    const at = new Date();
    const started = performance.now();
    const exchange = new Exchange();
    const finish: Finish = (outcome, error) => ({
      outcome,
      url: request.url,
      at,
      durationMs: Math.round(performance.now() - started),
      statusCode: exchange.statusCode,
      error,
    });
    let target: URL;
    try {
      target = new URL(request.url);
      // net.connect skips `lookup` for an IP literal, so the guard checks those here.
      if (!allowPrivateHosts) assertPublicHost(target.hostname);
    } catch (err) {
      return failure(err, finish);
    }
    return withSpan('POST', { kind: SpanKind.CLIENT, attributes: where(target) }, async (span) => {
      const result = await exchangeWith(target, request, exchange, at, finish);
      span.setAttributes({
        'callback.outcome': result.outcome,
        ...(result.statusCode === null ? {} : { 'http.response.status_code': result.statusCode }),
      });
      if (result.outcome !== 'succeeded') failSpan(span, result.error ?? `HTTP ${result.statusCode}`);
      return result;
    });
  }

  /** The exchange itself, inside the attempt's span (so its traceparent is the span's). */
  async function exchangeWith(target: URL, request: CallbackRequest, exchange: Exchange, at: Date, finish: Finish): Promise<AttemptResult> {
    const timer = setTimeout(() => exchange.cut('timeout'), timeoutMs);
    inFlight.add(exchange);
    agent.dispatch(
      { origin: target.origin, path: `${target.pathname}${target.search}`, method: 'POST', headers: requestHeaders(request, at), body: request.body },
      exchange,
    );
    const err = await exchange.done;
    clearTimeout(timer);
    clearTimeout(exchange.judgeTimer);
    inFlight.delete(exchange);
    if (exchange.cutBy === 'shutdown') {
      // Still connecting: nothing reached the merchant, so this is no attempt.
      if (!exchange.requestWritten) throw new SendAbortedError(request.eventId);
      // The merchant has the request, or may have: an attempt that failed, and the merchant is told why.
      const phase = exchange.statusCode === null ? 'a reply' : 'the reply body completed';
      const result = finish('aborted', null);
      return { ...result, error: `aborted: callback-svc stopped before ${phase} (after ${result.durationMs} ms)` };
    }
    if (exchange.cutBy === 'timeout') {
      const phase = exchange.statusCode === null ? 'no reply' : 'the reply body did not complete';
      return finish('timeout', `timeout: ${phase} within ${timeoutMs} ms`);
    }
    // A reply too large to read, or a failed one whose body was slow, is judged by its status all the same.
    if (err && !exchange.truncated && exchange.cutBy !== 'judged') return failure(err, finish);
    return finish(replyOutcome(exchange.statusCode), null);
  }

  return {
    send,
    abortAll: () => {
      shuttingDown = true;
      for (const exchange of inFlight) exchange.cut('shutdown');
    },
    // After abortAll() nothing is left worth waiting for, and agent.close() would wait for a request
    // still connecting (a TLS handshake or a SYN unanswered) until the connect timeout,
    // CALLBACK_TIMEOUT_MS, past the shutdown budget: destroy drops it at once.
    close: () => (shuttingDown ? agent.destroy() : agent.close()),
  };
}

type Finish = (outcome: AttemptOutcome, error: string | null) => AttemptResult;

/**
 * Where the attempt goes, for its client span: the host and port only, never the URL, whose path
 * or query may carry a merchant's credential.
 */
function where(target: URL): Record<string, string | number> {
  return { 'http.request.method': 'POST', 'server.address': target.hostname, 'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80) };
}

function failure(err: unknown, finish: Finish): AttemptResult {
  const outcome = (err as { code?: unknown }).code === ERR_PRIVATE_ADDRESS ? 'private_address' : 'network_error';
  return finish(outcome, describeError(err));
}

function requestHeaders(request: CallbackRequest, now: Date): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...webhookHeaders(request.signingSecrets, request.eventId, request.body, now),
  };
  // The W3C trace context of the active span (the attempt's client span), as docs/callbacks.md promises.
  injectTraceHeaders(headers);
  return headers;
}

/** `connect ECONNREFUSED 127.0.0.1:9`, `UND_ERR_SOCKET: other side closed`, … never empty. */
function describeError(err: unknown): string {
  // Happy-eyeballs connects report an AggregateError with an empty message: its first cause says more.
  const first = err instanceof AggregateError && err.errors.length > 0 ? err.errors[0] : err;
  const error = first instanceof Error ? first : new Error(String(first));
  const code = (error as { code?: unknown }).code;
  const message = error.message || error.name || 'request failed';
  const text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  return text.slice(0, MAX_ERROR_LENGTH);
}
