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
 *    many addresses together can refuse new connections but neither exhaust the descriptors nor
 *    grow the gateway past its memory limit.
 */
import { ApiError } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';

/** How long a connection beyond its address's share may stay open without sending a request. */
export const OVER_LIMIT_IDLE_MS = 1_000;

const OVER = Symbol('beyond its address’s connections');
type Counted = Socket & { [OVER]?: boolean };

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
