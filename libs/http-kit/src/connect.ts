/**
 * CONNECT asks a server to become a tunnel. Node hands such a request to the server's 'connect'
 * listeners instead of its request handler, so Fastify never sees it; with no listener Node
 * destroyed the socket and the client got no answer at all. No service here is a proxy: the answer
 * is 404 problem+json `not_found` with the request id, then the connection closes.
 *
 * 404, as every other method no route answers gets (problem-handler.ts), and not 405: the
 * contract's errors have no 405, and `not_found` says what is true (no route answers CONNECT)
 * without claiming a field is wrong, as `validation_failed` would.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { rawProblemResponse } from './client-error';
import { genReqId } from './request-id';

const REFUSAL = {
  status: 404,
  reason: 'Not Found',
  code: 'not_found',
  detail: 'CONNECT is not supported: this service is not a proxy.',
} as const;

export function answerConnect(app: FastifyInstance): void {
  app.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    const requestId = genReqId(req);
    app.log.info({ request_id: requestId, method: req.method, route: 'unmatched', status: REFUSAL.status }, 'request done');
    socket.end(rawProblemResponse(REFUSAL, requestId), () => socket.destroy());
  });
}
