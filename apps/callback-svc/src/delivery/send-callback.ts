/**
 * Step 2 of an attempt: one signed POST with undici. One Agent for the process keeps a keep-alive
 * pool per origin; redirects are not followed (dispatcher.request never does), so a 3xx is just a
 * failed attempt. A single AbortSignal bounds the whole exchange (connect, headers and body), and
 * the private-host guard runs where the socket is opened, on the addresses actually connected to.
 *
 * That signal is the attempt's timeout combined with one shutdown signal for the process: a send
 * cut short by `abortAll()` (SIGTERM, CALLBACK_TIMEOUT_MS being longer than SHUTDOWN_TIMEOUT_MS) is
 * no attempt at all. It throws SendAbortedError instead of returning a result, so nothing is
 * recorded and the message goes back to RabbitMQ for another replica to send in full.
 */
import { channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { injectTraceHeaders } from '@dw/telemetry';
import { assertPublicHost, ERR_PRIVATE_ADDRESS, guardedLookup } from '@dw/url-guard';
import { Agent } from 'undici';
import type { AttemptOutcome, AttemptResult } from './attempt-result';
import { webhookHeaders } from './sign-callback';

export const USER_AGENT = 'dw-callback-svc/1.0 (Standard Webhooks)';
/** A merchant's reply body is read and thrown away; past this size the connection is dropped instead. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Longest error text kept per attempt (a TLS or DNS error can be long). */
const MAX_ERROR_LENGTH = 500;

// OpenTelemetry's undici instrumentation listens here and adds `traceparent` (of its client span)
// to every request; adding our own as well would send two. Only without it do we add one.
const undiciRequestCreated = channel('undici:request:create');

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
  /** Resolves with the attempt's result; rejects with SendAbortedError once `abortAll()` was called. */
  send(request: CallbackRequest): Promise<AttemptResult>;
  /** Cuts every send in flight short and refuses new ones (shutdown). */
  abortAll(): void;
  close(): Promise<void>;
}

/** A send cut short by the process shutting down: not an attempt, nothing to record. */
export class SendAbortedError extends Error {
  constructor(readonly eventId: string) {
    super('callback send aborted: the process is shutting down');
    this.name = 'SendAbortedError';
  }
}

export function createCallbackSender({ timeoutMs, allowPrivateHosts }: SenderOptions): CallbackSender {
  const agent = new Agent({
    connect: { lookup: guardedLookup(allowPrivateHosts), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  const shutdown = new AbortController();

  async function send(request: CallbackRequest): Promise<AttemptResult> {
    if (shutdown.signal.aborted) throw new SendAbortedError(request.eventId);
    const at = new Date();
    const started = performance.now();
    // One controller per send, aborted by its timer or by the shutdown: AbortSignal.timeout plus
    // AbortSignal.any took about 14 µs per send against 3 µs for this in Node 20, before their GC.
    const attempt = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), attempt.abort()), timeoutMs);
    const onShutdown = () => attempt.abort();
    shutdown.signal.addEventListener('abort', onShutdown, { once: true });
    const signal = attempt.signal;
    let statusCode: number | null = null;
    const finish = (outcome: AttemptOutcome, error: string | null): AttemptResult => ({
      outcome,
      url: request.url,
      at,
      durationMs: Math.round(performance.now() - started),
      statusCode,
      error,
    });
    try {
      const target = new URL(request.url);
      // net.connect skips `lookup` for an IP literal, so the guard checks those here.
      if (!allowPrivateHosts) assertPublicHost(target.hostname);
      const reply = await agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: requestHeaders(request, at),
        body: request.body,
        signal,
      });
      statusCode = reply.statusCode;
      await reply.body.dump({ limit: MAX_RESPONSE_BYTES, signal });
      return statusCode === 200 ? finish('succeeded', null) : finish('http_status', null);
    } catch (err) {
      if (shutdown.signal.aborted && !timedOut) throw new SendAbortedError(request.eventId);
      if (signal.aborted) {
        const phase = statusCode === null ? 'no reply' : 'the reply body did not complete';
        return finish('timeout', `timeout: ${phase} within ${timeoutMs} ms`);
      }
      const outcome = (err as { code?: unknown }).code === ERR_PRIVATE_ADDRESS ? 'private_address' : 'network_error';
      return finish(outcome, describeError(err));
    } finally {
      clearTimeout(timer);
      shutdown.signal.removeEventListener('abort', onShutdown);
    }
  }

  return { send, abortAll: () => shutdown.abort(), close: () => agent.close() };
}

function requestHeaders(request: CallbackRequest, now: Date): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...webhookHeaders(request.signingSecrets, request.eventId, request.body, now),
  };
  if (!undiciRequestCreated.hasSubscribers) injectTraceHeaders(headers);
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
