/** Sends a fuzz request to the gateway: undici for well-formed HTTP, a raw socket for raw bytes. */
import net from 'node:net';
import { Agent, request } from 'undici';
import type { FuzzRequest } from './requests';

export interface FuzzResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const TIMEOUT_MS = 20_000;

export function createClient(gateway: string, connections: number) {
  const agent = new Agent({ connections, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, pipelining: 1 });
  const { hostname, port } = new URL(gateway);

  async function viaUndici(req: FuzzRequest): Promise<FuzzResponse> {
    const res = await request(gateway + req.path, {
      method: req.method as 'GET',
      headers: req.headers,
      body: req.body,
      dispatcher: agent,
    });
    const body = await res.body.text();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
    return { status: res.statusCode, headers, body };
  }

  /** Resolves as soon as one whole response has arrived: the server may keep the connection open. */
  function viaSocket(raw: Buffer, head: boolean): Promise<FuzzResponse> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: hostname, port: Number(port) });
      let received = Buffer.alloc(0);
      let done = false;
      const finish = (result: FuzzResponse | Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.destroy();
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const timer = setTimeout(() => finish(new Error('no response within 20 s')), TIMEOUT_MS);
      socket.on('connect', () => socket.write(raw));
      socket.on('data', (d) => {
        received = Buffer.concat([received, d]);
        const parsed = parseResponse(received, head, false);
        if (parsed) finish(parsed);
      });
      // The server may reset after answering a request it refused half-read; what it sent counts.
      socket.on('error', (err) => (received.length ? undefined : finish(err)));
      socket.on('close', () => {
        const parsed = parseResponse(received, head, true);
        finish(parsed ?? new Error(`no HTTP response (${received.length ? 'unparseable bytes' : 'connection closed'})`));
      });
    });
  }

  return {
    send: (req: FuzzRequest) => (req.raw ? viaSocket(req.raw, /^head /i.test(req.raw.subarray(0, 5).toString('latin1'))) : viaUndici(req)),
    close: () => agent.close(),
  };
}

/**
 * The first final HTTP/1.x response in `bytes` (a chunked body de-chunked), or undefined while it
 * is incomplete; interim answers (100 Continue) are skipped. `closed`: the connection has ended, so
 * a body without a length ends here.
 */
export function parseResponse(bytes: Buffer, head: boolean, closed: boolean): FuzzResponse | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const status = Number(m[1]);
  const rest = bytes.subarray(end + 4);
  if (status >= 100 && status < 200 && status !== 101) return parseResponse(rest, head, closed);
  if (head || status === 204 || status === 304) return { status, headers, body: '' };
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return closed ? { status, headers, body: Buffer.concat(parts).toString('utf8') } : undefined;
      const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (!size) return { status, headers, body: Buffer.concat(parts).toString('utf8') };
      if (rest.length < lineEnd + 2 + size + 2) return closed ? { status, headers, body: Buffer.concat(parts).toString('utf8') } : undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (rest.length < length) return closed ? { status, headers, body: rest.toString('utf8') } : undefined;
    return { status, headers, body: rest.subarray(0, length).toString('utf8') };
  }
  return closed ? { status, headers, body: rest.toString('utf8') } : undefined;
}
