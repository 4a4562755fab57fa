/**
 * A request is served only at the path it names in canonical form (docs/api.md#request-paths).
 * The router matches the raw path, but what happens after it does not: the WHATWG URL parser (which
 * the gateway's proxy builds its upstream URL with) reads `\` as `/` and resolves dot segments, so
 * `/ui/assets/x\..\..\..\metrics` matched the gateway's public `/ui/assets/*` and reached the ui's
 * `/metrics`. Every service refuses such a path before any handler runs, with the same rule, so no
 * hop can be made to serve a route the raw path did not name. Canonical means: an absolute path,
 * no `\`, no encoded `/` or `\` (`%2F`, `%5C`), no `.` or `..` segment however it is spelled
 * (`%2e%2e`, `.%2E`), valid percent-encoding and no fragment.
 */
import type { FastifyInstance } from 'fastify';
import { sendProblem } from './problem';

/** `GET http://host/path HTTP/1.1` (absolute form) names the same path as `GET /path`. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
const ENCODED_SEPARATOR = /%(2f|5c)/i;

function isDotSegment(segment: string): boolean | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return decoded === '.' || decoded === '..';
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
    if (dot) return 'must not contain a "." or ".." segment, in any spelling';
  }
  return undefined;
}

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
