/**
 * Turns every error into application/problem+json (RFC 9457) with a stable `code`. 4xx details say
 * what to fix; 5xx bodies never carry internal messages or stacks.
 */
import type { ProblemCode } from '@dw/contracts';
import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ApiError, BODY } from './errors';
import { sendProblem } from './problem';
import { fieldErrors, validationDetail } from './validation-messages';

const FASTIFY_CODES: Record<string, { status: number; code: ProblemCode; detail: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', detail: 'The request body exceeds 64 KiB.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    detail: 'Send the body as application/json.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'validation_failed',
    detail: 'The body is empty; send a JSON object.',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'validation_failed', detail: 'The body is not valid JSON.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'validation_failed',
    detail: 'Content-Length does not match the body.',
  },
};

const STATUS_CODES: Record<number, ProblemCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  404: 'not_found',
  405: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/**
 * The one line for a request an upstream could not serve (a forward, a token lookup, the ui's read):
 * what failed, as its code and message, without a stack; an outage to see, not a bug to trace. A
 * client library's wrapper (undici's) gives way to the socket's own code under it.
 */
export function logUpstreamUnavailable(log: FastifyBaseLogger, failure: unknown): void {
  const outer = (failure ?? {}) as { code?: unknown; message?: unknown; cause?: unknown };
  const inner = (typeof outer.cause === 'object' && outer.cause !== null ? outer.cause : {}) as { code?: unknown };
  log.warn({ error: { code: inner.code ?? outer.code, message: outer.message ?? String(failure) } }, 'upstream unavailable');
}

export function registerProblemHandling(
  app: FastifyInstance,
  mapError: (error: unknown) => ApiError | undefined = () => undefined,
): void {
  app.setErrorHandler((raw: FastifyError | ApiError, request, reply) => {
    const mapped = raw instanceof ApiError ? undefined : mapError(raw);
    // A dependency's error turned into a problem is still worth a look (a schema rule missed, say).
    if (mapped) request.log.warn({ err: raw, status: mapped.statusCode }, 'dependency error mapped to a problem');
    const error = raw instanceof ApiError ? raw : (mapped ?? raw);
    if (error instanceof ApiError) {
      if (error.statusCode >= 500 && error.cause !== undefined) logUpstreamUnavailable(request.log, error.cause);
      if (error.headers) reply.headers(error.headers);
      return sendProblem(request, reply, error.statusCode, error.code, error.message, error.errors);
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const where = fe.validationContext ?? 'request';
      const errors = fieldErrors(fe.validation as unknown as ErrorObject[], where);
      return sendProblem(request, reply, 400, 'validation_failed', validationDetail(errors), errors);
    }
    const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
    if (known) {
      const errors = known.code === 'validation_failed' ? [{ path: BODY, message: known.detail }] : undefined;
      return sendProblem(request, reply, known.status, known.code, known.detail, errors);
    }
    const status = fe.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Malformed JSON surfaces as a SyntaxError with status 400; other 4xx keep Fastify's message.
      const code = STATUS_CODES[status] ?? 'validation_failed';
      const detail = fe instanceof SyntaxError ? 'The body is not valid JSON.' : fe.message;
      const errors = code === 'validation_failed' ? [{ path: BODY, message: detail }] : undefined;
      return sendProblem(request, reply, status, code, detail, errors);
    }
    if (status === 503) {
      return sendProblem(request, reply, 503, 'service_unavailable', 'A dependency is unavailable; retry later.');
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, 500, 'internal', 'An internal error occurred; it has been logged.');
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, 404, 'not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`),
  );
}
