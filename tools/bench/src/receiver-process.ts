/**
 * A merchant's callback endpoint in its own process (so its work is not counted against the bench
 * process, and a hang here never blocks the bench's timers). The first path segment picks the
 * answer: /ok → 200 at once, /hang → never answers, /slow → 200 after 2 s, /429, /503 → that
 * status at once. The second segment is a tag the bench groups arrivals by. Arrivals are sent to
 * the parent over IPC in batches every 50 ms: [tag, transaction id, event type, arrival ms].
 * Bodies and headers are not kept: at thousands per second that would cost the receiver more than
 * answering.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Arrival = [tag: string, id: string, type: string, at: number];

let pending: Arrival[] = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const [, mode = 'ok', tag = ''] = (req.url ?? '/').split('/');
    let id = '';
    let type = '';
    try {
      const json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      id = String(json?.data?.id ?? '');
      type = String(json?.type ?? '');
    } catch {
      // Not a callback (the raw POST loop's body): counted under its tag all the same.
    }
    pending.push([tag, id, type, at]);
    if (mode === 'hang') return;
    const status = mode === '429' ? 429 : mode === '503' ? 503 : 200;
    if (mode === 'slow') setTimeout(() => res.writeHead(200).end('ok'), 2000);
    else res.writeHead(status).end('ok');
  });
});
server.keepAliveTimeout = 5000;

setInterval(() => {
  if (pending.length === 0) return;
  process.send!({ arrivals: pending });
  pending = [];
}, 50).unref();

process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => {
  process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
