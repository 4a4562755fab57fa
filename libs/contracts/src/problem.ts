import { Type, type Static } from '@sinclair/typebox';

export const PROBLEM_CODES = [
  'unauthorized',
  'validation_failed',
  'not_found',
  'conflict',
  'invalid_transition',
  'insufficient_funds',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'service_unavailable',
  'internal',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** RFC 9457 problem details, as every error of the API is answered. */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Union(PROBLEM_CODES.map((c) => Type.Literal(c))),
    requestId: Type.String(),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }, { additionalProperties: false })),
    ),
  },
  { additionalProperties: false, $id: 'Problem' },
);
export type Problem = Static<typeof Problem>;
