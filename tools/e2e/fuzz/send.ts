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

  function viaSocket(raw: Buffer): Promise<FuzzResponse> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: hostname, port: Number(port) });
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => socket.destroy(new Error('no response within 20 s')), TIMEOUT_MS);
      socket.on('connect', () => socket.write(raw));
      socket.on('data', (d) => chunks.push(d));
      // The server may reset after answering a request it refused half-read; what it sent counts.
      socket.on('error', (err) => (chunks.length ? undefined : (clearTimeout(timer), reject(err))));
      socket.on('close', () => {
        clearTimeout(timer);
        const parsed = parseResponse(Buffer.concat(chunks));
        if (parsed) resolve(parsed);
        else reject(new Error(`no HTTP response (${chunks.length ? 'unparseable bytes' : 'connection closed'})`));
      });
    });
  }

  return {
    send: (req: FuzzRequest) => (req.raw ? viaSocket(req.raw) : viaUndici(req)),
    close: () => agent.close(),
  };
}

/** The first HTTP/1.1 response in `bytes` (chunked bodies de-chunked), or undefined. */
export function parseResponse(bytes: Buffer): FuzzResponse | undefined {
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
  let body = bytes.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', at);
      if (lineEnd < 0) break;
      const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (!size) break;
      parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  return { status: Number(m[1]), headers, body: body.toString('utf8') };
}
