/**
 * A real HTTP server on 127.0.0.1 standing in for a merchant's callback endpoint. It records
 * every request (headers, raw body, arrival time) and answers with whatever `respond` decides:
 * a status, a status after a delay (a slow endpoint), a hang (never answers), a reset, a 200 whose
 * body never ends, or a status with a large body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
}

export type Reaction =
  | number
  | 'hang'
  | 'reset'
  /** 200 and the start of a body that never ends. */
  | 'stall-body'
  | { status: number; afterMs: number }
  /** The status with a body of this many bytes. */
  | { status: number; bodyBytes: number }
  /** The status and the start of a body that never ends. */
  | { status: number; stallBody: true };

export interface CallbackReceiver {
  url: string;
  received: ReceivedCallback[];
  /** Decides the answer to each request; default 200. */
  respond: (req: ReceivedCallback, index: number) => Reaction;
  /** Resolves once `count` requests matching `filter` have arrived (rejects after timeoutMs). */
  waitFor(count: number, filter?: (r: ReceivedCallback) => boolean, timeoutMs?: number): Promise<ReceivedCallback[]>;
  close(): Promise<void>;
}

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const entry: ReceivedCallback = { at: Date.now(), path: req.url ?? '/', headers: req.headers, body, json };
      received.push(entry);
      const reaction = receiver.respond(entry, received.length - 1);
      for (const w of waiters) w();
      if (reaction === 'hang') return;
      if (reaction === 'reset') return req.socket.destroy();
      if (reaction === 'stall-body') return void res.writeHead(200, { 'content-type': 'text/plain' }).write('the start of a reply');
      if (typeof reaction === 'object' && 'stallBody' in reaction) return void res.writeHead(reaction.status, { 'content-type': 'text/plain' }).write('the start of a reply');
      if (typeof reaction === 'object' && 'bodyBytes' in reaction) {
        res.writeHead(reaction.status, { 'content-type': 'text/plain' }).end(Buffer.alloc(reaction.bodyBytes, 'x'));
        return;
      }
      if (typeof reaction === 'object') {
        setTimeout(() => res.writeHead(reaction.status, { 'content-type': 'text/plain' }).end('ok'), reaction.afterMs);
        return;
      }
      res.writeHead(reaction, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: CallbackReceiver = {
    url: `http://127.0.0.1:${port}`,
    received,
    respond: () => 200,
    waitFor(count, filter = () => true, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hits = received.filter(filter);
          if (hits.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hits);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`waited ${timeoutMs} ms for ${count} callbacks, got ${received.filter(filter).length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
