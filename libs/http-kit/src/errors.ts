/**
 * Every error the API answers with, declared once with a stable code (the `code` of the problem
 * body). Handlers throw these; the problem handler turns them into application/problem+json.
 */
import createError from '@fastify/error';
import type { ProblemCode } from '@dw/contracts';
import { validationDetail } from './validation-messages';

export interface FieldError {
  /** A JSON Pointer (RFC 6901) into the body, `BODY` for the body as a whole; `querystring:/limit`… for other parts. */
  path: string;
  message: string;
}

/**
 * Field errors a problem lists at most (its detail gives the count when there are more): a request
 * of at most 64 KiB can break a rule thousands of times, and listing each by its path made answers
 * hundreds of times the request's size.
 */
export const MAX_LISTED_ERRORS = 20;

/** The path of an error about the body as a whole (not valid JSON, not an object): RFC 6901's pointer to the whole document. */
export const BODY = '';

/** One key as a JSON Pointer reference token (RFC 6901 §3): `~` as `~0`, `/` as `~1`, so `{"a/b":1}` is `/a~1b`, not `/a/b`. */
export const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The keys a JSON Pointer names, its tokens unescaped (`pointerToken`'s inverse): `/metadata/a~1b` is `['metadata', 'a/b']`, `''` is `[]`. */
export const pointerKeys = (pointer: string): string[] =>
  pointer === '' ? [] : pointer.slice(1).split('/').map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));

export class ApiError extends Error {
  constructor(
    public readonly statusCode: number,
    public readonly code: ProblemCode,
    message: string,
    public readonly errors?: FieldError[],
    public readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The challenge of a merchant's 401 (RFC 9110 §11.6.1: a 401 names how to authenticate): the token in
 * the serviceApiToken header. A scheme of its own, so no browser offers a password dialog.
 */
export const MERCHANT_CHALLENGE = { 'www-authenticate': 'serviceApiToken realm="merchant API"' };

/** 401; `headers` is the challenge where a merchant's token was what was missing (MERCHANT_CHALLENGE). */
export const unauthorized = (headers?: Record<string, string>) =>
  new ApiError(401, 'unauthorized', 'Send a valid API token in the serviceApiToken header.', undefined, headers);
export const validationFailed = (errors: FieldError[], detail = validationDetail(errors)) =>
  new ApiError(400, 'validation_failed', detail, errors);
export const notFound = (detail = 'No such resource.') => new ApiError(404, 'not_found', detail);
export const conflict = (detail: string) => new ApiError(409, 'conflict', detail);
export const invalidTransition = (detail: string) => new ApiError(409, 'invalid_transition', detail);
export const insufficientFunds = (detail: string) => new ApiError(422, 'insufficient_funds', detail);
/** 429 with Retry-After; `what` says which limit was passed (the token's rate unless told otherwise). */
export const rateLimited = (retryAfterSeconds: number, what = 'Too many requests') =>
  new ApiError(429, 'rate_limited', `${what}; retry after ${retryAfterSeconds} s.`, undefined, {
    'retry-after': String(retryAfterSeconds),
  });
/**
 * 503. `cause` (what failed: a connection refused, an upstream's unexpected answer) is not shown to
 * the client; the problem handler logs it, one warn line without a stack ('upstream unavailable').
 */
export const serviceUnavailable = (detail = 'A service this request needs is unavailable; retry later.', cause?: unknown) => {
  const error = new ApiError(503, 'service_unavailable', detail);
  if (cause !== undefined) error.cause = cause;
  return error;
};

/** What an upstream answered when it was not what the caller can use, as a `cause` to log. */
export const unexpectedAnswer = (upstream: string, statusCode: number, what = 'an answer it cannot use') =>
  Object.assign(new Error(`${upstream} answered ${statusCode}: ${what}`), { code: `HTTP_${statusCode}` });

/** For code that must throw a Fastify-style error (plugins); mapped like ApiError. */
export const FST_DW_UPSTREAM_UNAVAILABLE = createError('FST_DW_UPSTREAM_UNAVAILABLE', 'Upstream unavailable', 503);

export const PROBLEM_TITLES: Record<ProblemCode, string> = {
  unauthorized: 'Unauthorized',
  validation_failed: 'Validation failed',
  not_found: 'Not found',
  conflict: 'Conflict',
  invalid_transition: 'Invalid status transition',
  insufficient_funds: 'Insufficient funds',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Too many requests',
  service_unavailable: 'Service unavailable',
  internal: 'Internal error',
};
