/**
 * Connections, counted at the socket. A client that opens connections and sends nothing holds a
 * file descriptor and about 10 KB of the gateway each until its stall timeout: against `npm start`
 * one address opened 24,000 idle connections, the gateway reached its 20,000 descriptors and
 * 370 MB, and every other merchant's requests failed (0 of 158 answered) until they timed out.
 *
 * 1. Per peer address, `perAddress` (GATEWAY_CONNECTIONS_PER_ADDRESS): a connection beyond it is
 *    answered on its first request `429 rate_limited` with `Connection: close`, and closed after
 *    OVER_LIMIT_IDLE_MS if it sends nothing. Only where the peer is the client (TRUST_PROXY_HOPS=0):
 *    behind an ingress every connection's peer is the ingress, whose own connection limits apply.
 * 2. All together, `max` (GATEWAY_MAX_CONNECTIONS): Node closes a connection beyond it at once, so
 *    many addresses together can neither exhaust the descriptors nor grow the gateway past its
 *    memory limit. And then the idle connections are closed too, at most once a second: those kept
 *    alive between requests, and those that have sent nothing for OVER_LIMIT_IDLE_MS. Held open, 10,500 idle connections from 42 addresses
 *    (250 each, under the per-address share, no token needed) kept every new connection out for as
 *    long as they stayed (found by an outside audit: 26 of another merchant's 30 new connections
 *    reset in 55 s). A request in progress is never cut; a keep-alive client opens a new
 *    connection for its next request, as it would after the idle timeout.
 */
import { ApiError } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';

/** How long a connection beyond its address's share may stay open without sending a request. */
export const OVER_LIMIT_IDLE_MS = 1_000;

const OVER = Symbol('beyond its address’s connections');
type Counted = Socket & { [OVER]?: boolean };

/** How often, at most, the idle connections are closed while new ones find the gateway full. */
export const IDLE_SWEEP_EVERY_MS = 1_000;

/** The settings' defaults (libs/config): 256 per address, 10,000 in all (about 100 MB of idle sockets). */
export const DEFAULT_CONNECTION_LIMITS = { perAddress: 256, max: 10_000 };

export interface ConnectionLimits {
  perAddress: number;
  max: number;
  /** TRUST_PROXY_HOPS: above 0 the peer is a proxy, not limited per address. */
  trustProxyHops: number;
}

export function limitConnections(app: FastifyInstance, { perAddress, max, trustProxyHops }: ConnectionLimits): void {
  app.server.maxConnections = max;
  // When each connection opened, until it closes: the ones that never sent a byte are found here
  // (Node's closeIdleConnections closes only those kept alive after a request).
  const opened = new Map<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    opened.set(socket, Date.now());
    socket.once('close', () => opened.delete(socket));
  });
  let swept = 0;
  app.server.on('drop', () => {
    const now = Date.now();
    if (now - swept < IDLE_SWEEP_EVERY_MS) return;
    swept = now;
    app.server.closeIdleConnections();
    for (const [socket, at] of opened) if (socket.bytesRead === 0 && now - at >= OVER_LIMIT_IDLE_MS) socket.destroy();
  });
  if (trustProxyHops > 0) return;
  const open = new Map<string, number>();
  app.server.on('connection', (socket: Counted) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
    if (count > perAddress) {
      socket[OVER] = true;
      // Replaces the server's stall timeout on this socket: the server closes it when it fires.
      socket.setTimeout(OVER_LIMIT_IDLE_MS);
    }
  });
  const refusal = () =>
    new ApiError(429, 'rate_limited', `More than ${perAddress} connections are open from this address; send requests on the ones open.`, undefined, {
      'retry-after': '1',
      connection: 'close',
    });
  // A callback hook: it runs on every request and waits for nothing.
  app.addHook('onRequest', (request, _reply, done) => {
    done((request.raw.socket as Counted)[OVER] ? refusal() : undefined);
  });
}
