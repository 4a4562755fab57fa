/**
 * GET with the request target sent byte for byte: node:http passes `path` through as written (no
 * URL parsing, so `\`, `%5C` and dot segments arrive as the client spelled them), where fetch and
 * undici would normalise them first and never test what a hostile client can send.
 */
import http from 'node:http';

export interface RawPathResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function getRawPath(base: string, target: string, headers: Record<string, string> = {}): Promise<RawPathResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'GET', path: target, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
