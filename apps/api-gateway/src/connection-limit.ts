/**
 * Connections, counted at the socket. A client that opens connections and sends nothing holds a
 * file descriptor and about 10 KB of the gateway each until its stall timeout: against `npm start`
 * one address opened 24,000 idle connections, the gateway reached its 20,000 descriptors and
 * 370 MB, and every other merchant's requests failed (0 of 158 answered) until they timed out.
 *
 * 1. Per peer address, `perAddress` (GATEWAY_CONNECTIONS_PER_ADDRESS): a connection beyond it is
 *    answered on its first request `429 rate_limited` with `Connection: close`, and closed
 *    OVER_LIMIT_IDLE_MS after it opened if no request's head has come by then, however it trickles
 *    bytes (an idle timeout alone was reset by every byte: an outside audit held 1,000 connections
 *    from one address, 256 allowed, by sending a byte of a head every 700 ms). Only where the peer
 *    is the client (TRUST_PROXY_HOPS=0): behind an ingress every connection's peer is the ingress,
 *    whose own connection limits apply.
 * 2. All together, `max` (GATEWAY_MAX_CONNECTIONS): Node closes a connection beyond it at once, so
 *    many addresses together can neither exhaust the descriptors nor grow the gateway past its
 *    memory limit. And then, at most once a second, every connection open for OVER_LIMIT_IDLE_MS
 *    or more with no request in progress is closed too: kept alive between requests, silent, or
 *    still sending a head after that long (a slow-header client). Held open, 10,500 idle
 *    connections from 42 addresses (250 each, under the per-address share, no token needed) kept
 *    every new connection out for as long as they stayed; so did connections that each sent one
 *    byte and reconnected when closed (outside audits: 26 of another merchant's 30 new connections
 *    reset in 55 s; 487 of its 582 requests). A request whose head has come is never cut, whatever
 *    it waits for; a keep-alive client opens a new connection for its next request, as it would
 *    after the idle timeout.
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

/**
 * Whether a request's head has come on this connection and its answer is not over yet. Node's HTTP
 * server attaches the request's response to its socket (`_httpMessage`) from the head's arrival to
 * the answer's end, and takes it off after: read here, nothing needs counting on every request.
 * connection-limit.test.ts proves both sides (a request waiting for its upstream is kept; a head
 * that is still arriving is not).
 */
function inProgress(socket: Socket): boolean {
  return Boolean((socket as Socket & { _httpMessage?: unknown })._httpMessage);
}

export function limitConnections(app: FastifyInstance, { perAddress, max, trustProxyHops }: ConnectionLimits): void {
  app.server.maxConnections = max;
  // When each connection opened, until it closes: those with no request in progress, silent or still
  // sending a head, are found here (Node's closeIdleConnections closes only those kept alive after a request).
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
    for (const [socket, at] of opened) if (!inProgress(socket) && now - at >= OVER_LIMIT_IDLE_MS) socket.destroy();
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
      // A deadline from the connection's opening, not an idle timeout, which each byte would reset.
      // A head that came in time gets its 429 and the connection closes after it (refusal below).
      const deadline = setTimeout(() => inProgress(socket) || socket.destroy(), OVER_LIMIT_IDLE_MS).unref();
      socket.once('close', () => clearTimeout(deadline));
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
