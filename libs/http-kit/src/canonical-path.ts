/**
 * A request is served only at the path it names in canonical form (docs/api.md#request-paths).
 * The router matches the raw path, but what happens after it does not: the WHATWG URL parser (which
 * the gateway's proxy builds its upstream URL with) reads `\` as `/` and resolves dot segments, so
 * `/ui/assets/x\..\..\..\metrics` matched the gateway's public `/ui/assets/*` and reached the ui's
 * `/metrics`. Every service refuses such a path before any handler runs, with the same rule, so no
 * hop can be made to serve a route the raw path did not name. Canonical means: an absolute path,
 * no `\`, no encoded `/` or `\` (`%2F`, `%5C`), no `.` segment nor one starting with `..` however
 * it is spelled (`%2e%2e`, `.%2E`, `..;`), valid percent-encoding and no fragment.
 */
import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify';
import { pointerToken, type FieldError } from './errors';
import { sendProblem } from './problem';
import { validationDetail } from './validation-messages';

/** `GET http://host/path HTTP/1.1` (absolute form) names the same path as `GET /path`. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
const ENCODED_SEPARATOR = /%(2f|5c)/i;

/**
 * `.`, or any segment that starts with `..`: `..` itself, and `..;` (read as `..` by servers that
 * drop a segment's parameters) or `....`, which the gateway's proxy library refuses as traversal with
 * a message of its own (an outside audit met it on `/ui/assets/..;/metrics`).
 */
function isDotSegment(segment: string): boolean | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return decoded === '.' || decoded.startsWith('..');
  } catch {
    return undefined;
  }
}

/** Why the request target's path is not canonical, or undefined when it is. */
export function nonCanonicalPath(url: string): string | undefined {
  const target = url.replace(ABSOLUTE_FORM, '');
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  if (!path.startsWith('/')) return 'must be an absolute path';
  if (path.includes('#')) return 'must not contain a fragment ("#")';
  if (path.includes('\\')) return 'must not contain "\\"';
  if (ENCODED_SEPARATOR.test(path)) return 'must not contain an encoded "/" or "\\" (%2F, %5C)';
  for (const segment of path.split('/')) {
    const dot = isDotSegment(segment);
    if (dot === undefined) return 'must be valid percent-encoding';
    if (dot) return 'must not contain a "." segment or one starting with "..", in any spelling';
  }
  return undefined;
}

function decoded(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * The first query parameter a route must not read as it stands, as a field error; undefined when
 * there is none:
 * - a name or value that is not valid percent-encoding (a `%` without two hex digits after it, or
 *   bytes that are not UTF-8). The query parser would otherwise keep such a value as its literal
 *   text, so `?orderId=%E0%A4%A` filtered on a string the client never meant; bytes that are not
 *   UTF-8 are refused in a path and in a body alike, and so in a query;
 * - a name given twice (`?limit=10&limit=100`). The parser makes an array of it, which a schema
 *   could only call "not a string"; and a proxy or log that reads the first sees another request
 *   than one that reads the last (as a JSON body's repeated key, json-body.ts).
 */
export function queryParameterFault(url: string): FieldError | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  const pairs = url.slice(q + 1).split('&');
  if (pairs.length > MAX_QUERY_PARAMETERS) return { path: 'querystring', message: `must hold at most ${MAX_QUERY_PARAMETERS} parameters` };
  const names = new Set<string>();
  for (const pair of pairs) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = decoded(rawName);
    if (name === undefined) return { path: 'querystring', message: MALFORMED };
    const path = `querystring:/${pointerToken(name)}`;
    if (eq !== -1 && decoded(pair.slice(eq + 1)) === undefined) return { path, message: MALFORMED };
    if (names.has(name)) return { path, message: 'must be given once' };
    names.add(name);
  }
  return undefined;
}

const MALFORMED = 'must be valid percent-encoding of UTF-8 (write a literal "%" as %25)';

/**
 * Parameters a query string may hold (the API's endpoints take at most eight). About 1,400 unknown
 * ones in 13 KB, each judged and named, cost the gateway 10–28 ms a request, and one merchant asking
 * 50 a second slowed another's requests p50 11 -> 380 ms (an outside audit); refused at once, 0.5 ms.
 */
export const MAX_QUERY_PARAMETERS = 64;

/** Refuses a non-canonical path with 400 before any route's hooks or handler run. */
export function refuseNonCanonicalPaths(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const reason = nonCanonicalPath(request.raw.url ?? '');
    if (reason === undefined) return;
    return sendProblem(request, reply, 400, 'validation_failed', `The request path is not canonical: it ${reason}.`, [
      { path: 'path', message: reason },
    ]);
  });
}

/**
 * On a route that reads its query (one whose querystring schema declares a parameter), refuses a
 * parameter that is not valid percent-encoding, or one given twice, with 400 (queryParameterFault),
 * as part of validating the query: after authentication, like every other rule of a parameter. A
 * route whose query takes nothing refuses any parameter by its schema alone (the gateway gives
 * every merchant route one: routes/declared-query.ts there), so a create runs no hook for this.
 */
export function refuseMalformedQueries(app: FastifyInstance): void {
  const refuse: preValidationAsyncHookHandler = async (request, reply) => {
    const fault = queryParameterFault(request.raw.url ?? '');
    if (fault === undefined) return;
    return sendProblem(request, reply, 400, 'validation_failed', validationDetail([fault]), [fault]);
  };
  app.addHook('onRoute', (route) => {
    const query = route.schema?.querystring as { properties?: object } | undefined;
    if (query === undefined || Object.keys(query.properties ?? {}).length === 0) return;
    const own = route.preValidation;
    route.preValidation = [refuse, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])];
  });
}
