/**
 * A graceful close that does not wait for connections that never sent a request. Node's
 * server.close() waits for them (closeIdleConnections skips a connection until its first request
 * is done), and a client's pool may leave such a connection open: the gateway's does after it
 * aborts a forwarded request, as when a merchant drops a CSV download, and the ui's SIGTERM then
 * ended in "killed by timeout", exit 1. Every service closes them.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export function closeUnusedConnectionsOnClose(app: FastifyInstance): void {
  const unused = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage) => unused.delete(request.socket));
  // preClose runs before server.close(): a connection with a request in flight is left to finish.
  app.addHook('preClose', async () => {
    for (const socket of unused) socket.destroy();
  });
}
