/**
 * A route of the merchant API that declares no query takes none: `?foo=1` on it is a 400 naming
 * `foo`, as an unknown body field is, instead of being dropped in silence. A merchant who writes
 * `GET /api/getBalance?currency=USD` learns that nothing filters there, rather than reading every
 * currency as if it were one (Stripe refuses unknown parameters in the same way).
 */
import type { FastifyInstance } from 'fastify';

const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

/** Gives every route registered after it in `scope` (and its children) the empty query schema unless it declares its own. */
export function refuseUndeclaredQuery(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    route.schema ??= {};
    route.schema.querystring ??= NO_QUERY;
  });
}
