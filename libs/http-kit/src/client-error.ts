/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a control character in a header, a
 * header section over 16 KiB, a broken request line) still get an application/problem+json answer
 * (docs/api.md#errors), written straight to the socket as Fastify's own default handler does.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HEADER_REQUEST_ID, PROBLEM_CONTENT_TYPE, type ProblemCode } from '@dw/contracts';
import type { FieldError } from './errors';
import { problemBody } from './problem';
import { genReqId, SANE_REQUEST_ID } from './request-id';

export interface Refusal {
  status: number;
  reason: string;
  code: ProblemCode;
  detail: string;
  path: string;
}

/** Not 408: the contract's errors give validation_failed the status 400, as for 431 below. */
const TOO_SLOW: Refusal = { status: 400, reason: 'Bad Request', code: 'validation_failed', detail: 'The request took too long to arrive.', path: 'request' };

function refusalFor(err: NodeJS.ErrnoException): Refusal {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // 431 is not among the contract's codes; 400 validation_failed says the same to a client.
    return { status: 400, reason: 'Bad Request', code: 'validation_failed', detail: 'The request headers exceed 16 KiB.', path: 'headers' };
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return TOO_SLOW;
  return {
    status: 400,
    reason: 'Bad Request',
    code: 'validation_failed',
    detail: 'The request is not valid HTTP (for example a control character in a header).',
    path: 'request',
  };
}

/** A whole HTTP/1.1 response carrying a problem, for code that answers on the socket itself; it closes the connection. */
export function rawProblemResponse(
  refusal: Pick<Refusal, 'status' | 'reason' | 'code' | 'detail'>,
  requestId: string,
  errors?: FieldError[],
  headers: Record<string, string> = {},
): string {
  const body = JSON.stringify(problemBody(requestId, refusal.status, refusal.code, refusal.detail, errors));
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return (
    `HTTP/1.1 ${refusal.status} ${refusal.reason}\r\n` +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `${HEADER_REQUEST_ID}: ${requestId}\r\n` +
    'Cache-Control: no-store\r\n' +
    'X-Content-Type-Options: nosniff\r\n' +
    extra +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * The client's x-request-id, read from the bytes the parser refused (Node hands them over as
 * `rawPacket`), when it sent a sane one before the fault: echoed as on every other answer.
 */
export function sentRequestId(rawPacket: unknown): string | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  const head = rawPacket.toString('latin1');
  const end = head.indexOf('\r\n\r\n');
  const lines = (end === -1 ? head : head.slice(0, end)).split('\r\n').slice(1);
  const sent = lines.filter((line) => line.slice(0, line.indexOf(':')).toLowerCase() === HEADER_REQUEST_ID);
  if (sent.length !== 1) return undefined;
  const value = sent[0]!.slice(sent[0]!.indexOf(':') + 1).trim();
  return SANE_REQUEST_ID.test(value) ? value : undefined;
}

/** The last request a socket carried and its response (trackExchanges), for the request timeout. */
const LAST_EXCHANGE = Symbol('dw.lastExchange');
type TrackedSocket = Socket & { [LAST_EXCHANGE]?: { req: IncomingMessage; res: ServerResponse } };

/** The socket's last request, when its body never arrived whole (what a timeout interrupts). */
function interruptedExchange(socket: Socket): { req: IncomingMessage; res: ServerResponse } | undefined {
  const last = (socket as TrackedSocket)[LAST_EXCHANGE];
  return last && !last.req.complete ? last : undefined;
}

/** Writes the refusal as the connection's last answer (when it can still be written), then closes it. */
function refuseAndClose(socket: Socket, refusal: Refusal, requestId: string): void {
  if (socket.writable) socket.write(rawProblemResponse(refusal, requestId, [{ path: refusal.path, message: refusal.detail }]));
  socket.destroy();
}

/**
 * Notes each socket's latest request and response, so that a timeout knows what it interrupts; and
 * answers the stall timeout (CLIENT_STALL_TIMEOUT_MS, no byte either way) of a request whose body
 * stopped arriving altogether as the request timeout answers one that trickles: a 400 problem,
 * where Node closed the socket without a word. The stall timer, reset by every byte, fires first
 * when none come. A response under way (a download nobody reads) is cut without one, by a reset.
 */
export function trackExchanges(server: Server): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    (req.socket as TrackedSocket)[LAST_EXCHANGE] = { req, res };
  });
  // With a listener, Node leaves the timed-out socket to it: it is always destroyed here.
  server.on('timeout', (socket: Socket) => {
    const interrupted = interruptedExchange(socket);
    if (interrupted && !interrupted.res.headersSent) return refuseAndClose(socket, TOO_SLOW, genReqId(interrupted.req));
    // A reset, not a close: closed, the kernel kept the answer's unsent megabytes for the client that
    // stopped reading (FIN-WAIT-1, 1.8 MB for about 5 minutes, its client never told: an outside
    // audit); reset, both ends let go at once.
    socket.resetAndDestroy();
  });
}

export function problemClientErrorHandler(err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = refusalFor(err);
  // A request timeout interrupts the socket's last request when that one's body never arrived
  // whole. Answered already (a 404 or 401 sent before the body was read), it gets no second
  // answer: a 400 written now would be read as the answer to the client's next request. Not yet
  // answered, its 400 carries the request id it was given.
  const interrupted = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? interruptedExchange(socket) : undefined;
  if (interrupted?.res.headersSent) {
    socket.destroy();
    return;
  }
  refuseAndClose(socket, refusal, sentRequestId(err.rawPacket) ?? (interrupted ? genReqId(interrupted.req) : randomUUID()));
}
