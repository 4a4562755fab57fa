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
 * 3. Where addresses are counted (TRUST_PROXY_HOPS=0), a full gateway admits a new connection in
 *    place of an idle one (the oldest with no request in progress) of an address holding more
 *    connections than the newcomer's would: attackers that reconnect as fast as they are closed
 *    otherwise won the freed places (an outside audit: another client with new connections got 83 of
 *    584 requests served beside 42 such addresses). A newcomer no lighter than the heaviest is
 *    refused, and only the addresses holding as many as it would are swept.
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

/**
 * Open connections per peer address, and the addresses grouped by how many they hold, so that an
 * address holding the most is found at once, however many addresses there are.
 */
class ConnectionsByAddress {
  private readonly sockets = new Map<string, Set<Socket>>();
  private readonly holding = new Map<number, Set<string>>();
  private most = 0;

  /** Counts `socket` for `address`; its new count. */
  add(address: string, socket: Socket): number {
    const mine = this.sockets.get(address) ?? new Set<Socket>();
    this.sockets.set(address, mine);
    this.move(address, mine.size, mine.size + 1);
    mine.add(socket);
    return mine.size;
  }

  count(address: string): number {
    return this.sockets.get(address)?.size ?? 0;
  }

  /** Forgets `socket` (once; later calls do nothing). */
  remove(address: string, socket: Socket): void {
    const mine = this.sockets.get(address);
    if (!mine?.delete(socket)) return;
    this.move(address, mine.size + 1, mine.size);
    if (mine.size === 0) this.sockets.delete(address);
  }

  /**
   * A connection with no request in progress (oldest first) of an address holding more than
   * `fewer` (so at least `fewer` once it is gone), looked for among a few of the addresses holding the most.
   */
  idleOfHeavierThan(fewer: number): { address: string; socket: Socket } | undefined {
    if (this.most <= fewer) return undefined;
    let tried = 0;
    for (const address of this.holding.get(this.most) ?? []) {
      for (const socket of this.sockets.get(address) ?? []) if (!inProgress(socket)) return { address, socket };
      if (++tried === 8) break;
    }
    return undefined;
  }

  private move(address: string, from: number, to: number): void {
    if (from > 0) {
      const group = this.holding.get(from)!;
      group.delete(address);
      if (group.size === 0) this.holding.delete(from);
    }
    if (to > 0) {
      const group = this.holding.get(to) ?? new Set<string>();
      this.holding.set(to, group.add(address));
    }
    if (to > this.most) this.most = to;
    while (this.most > 0 && !this.holding.has(this.most)) this.most--;
  }
}

/**
 * Beyond `max` with addresses counted, connections a moment may hold open while the ones the gateway
 * closed are still closing (Node counts them until their 'close'); Node itself refuses beyond that.
 */
const CLOSING_HEADROOM = 128;

export function limitConnections(app: FastifyInstance, { perAddress, max, trustProxyHops }: ConnectionLimits): void {
  // When each connection opened, until it closes: those with no request in progress, silent or still
  // sending a head, are found here (Node's closeIdleConnections closes only those kept alive after a request).
  const opened = new Map<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    opened.set(socket, Date.now());
    socket.once('close', () => opened.delete(socket));
  });
  let swept = 0;
  /** At most once a second: the idle connections, of every client or (`of`) of some. */
  const sweepIdle = (of?: (socket: Socket) => boolean) => {
    const now = Date.now();
    if (now - swept < IDLE_SWEEP_EVERY_MS) return;
    swept = now;
    if (!of) app.server.closeIdleConnections();
    for (const [socket, at] of opened) if (!inProgress(socket) && now - at >= OVER_LIMIT_IDLE_MS && (!of || of(socket))) socket.destroy();
  };
  if (trustProxyHops > 0) {
    // Every peer is the proxy: Node refuses beyond `max`, and a refusal sweeps.
    app.server.maxConnections = max;
    app.server.on('drop', () => sweepIdle());
    return;
  }
  app.server.maxConnections = max + CLOSING_HEADROOM;
  const byAddress = new ConnectionsByAddress();
  app.server.on('connection', (socket: Counted) => {
    const address = socket.remoteAddress ?? '';
    const count = byAddress.add(address, socket);
    socket.once('close', () => byAddress.remove(address, socket));
    if (opened.size > max) {
      // Full: the newcomer takes the place of an idle connection of an address holding more than it
      // will, so a client with few connections gets in however fast others reconnect. Otherwise it
      // is refused, and the idle connections of the addresses holding as many as it would are swept
      // (many addresses with a few each), never those of clients holding fewer.
      const victim = byAddress.idleOfHeavierThan(count);
      const closing = victim?.socket ?? socket;
      byAddress.remove(victim?.address ?? address, closing);
      opened.delete(closing);
      closing.destroy();
      if (!victim) {
        sweepIdle((other) => byAddress.count(other.remoteAddress ?? '') >= count);
        return;
      }
    }
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
