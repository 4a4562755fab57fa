import { PROBLEM_CONTENT_TYPE, type Problem, type ProblemCode } from '@dw/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_LISTED_ERRORS, PROBLEM_TITLES, type FieldError } from './errors';

// A URN, not a URL: it names the problem type stably without pointing clients at a host we don't
// control. The codes are documented in docs/api.md.
export const PROBLEM_TYPE_BASE = 'urn:deposit-withdraw:problem:';

export function problemBody(
  requestId: string,
  status: number,
  code: ProblemCode,
  detail: string,
  errors?: FieldError[],
): Problem {
  return {
    type: PROBLEM_TYPE_BASE + code,
    title: PROBLEM_TITLES[code],
    status,
    detail,
    code,
    requestId,
    ...(errors ? { errors: errors.length > MAX_LISTED_ERRORS ? errors.slice(0, MAX_LISTED_ERRORS) : errors } : {}),
  };
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: ProblemCode,
  detail: string,
  errors?: FieldError[],
): FastifyReply {
  // An error is true of this request only: no cache may keep it (docs/api.md#errors).
  return reply
    .code(status)
    .type(PROBLEM_CONTENT_TYPE)
    .header('cache-control', 'no-store')
    .send(JSON.stringify(problemBody(String(request.id), status, code, detail, errors)));
}
