/**
 * CONNECT asks a server to become a tunnel. Node hands such a request to the server's 'connect'
 * listeners instead of its request handler, so Fastify never sees it; with no listener Node
 * destroyed the socket and the client got no answer at all. No service here is a proxy: the answer
 * is 405 problem+json with the request id, then the connection closes.
 *
 * The code is `not_found`, the one problem-handler.ts gives Fastify's own 405s: the contract has no
 * code for a method, and `not_found` says what is true (no route answers CONNECT) without claiming
 * a field is wrong, as `validation_failed` would (which would also need `errors`).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { rawProblemResponse } from './client-error';
import { genReqId } from './request-id';

const REFUSAL = {
  status: 405,
  reason: 'Method Not Allowed',
  code: 'not_found',
  detail: 'CONNECT is not supported: this service is not a proxy.',
} as const;

/** A route's URL (`/a/:id/b`, `/ui/assets/*`) as a regular expression over request paths. */
function routePattern(url: string): RegExp {
  const source = url
    .split(/(:[^/]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

export function answerConnect(app: FastifyInstance): void {
  // RFC 9110 §15.5.6: a 405 lists in Allow the methods the target does answer (none for an
  // authority such as `example.com:443`), so every route is noted as it is added.
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    routes.push({ pattern: routePattern(route.url), methods: ([] as string[]).concat(route.method) });
  });
  const allowFor = (target: string) => {
    const path = target.split('?')[0]!;
    const methods = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
    return [...methods].sort().join(', ');
  };

  app.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    const requestId = genReqId(req);
    app.log.info({ request_id: requestId, method: req.method, route: 'unmatched', status: REFUSAL.status }, 'request done');
    socket.end(rawProblemResponse(REFUSAL, requestId, undefined, { Allow: allowFor(req.url ?? '') }), () => socket.destroy());
  });
}
