/**
 * Issue 20's upstream for the forwarding comparison: answers every POST /api/* with 201 and a fixed
 * transaction object of the size transactions-svc answers, without checking anything. Both the
 * gateway and the bare proxy (proxy-server.ts) forward to it, so the comparison holds only the
 * forwarding layers: the gateway's token lookup, rate limit, proof and forward vs reply-from alone.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const TX = {
  id: '019ac0de-0000-7000-8000-000000000000',
  type: 'deposit',
  status: 'pending',
  amount: '1.00',
  currency: 'USD',
  orderId: 'echo',
  description: null,
  metadata: {},
  destination: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};
const body = JSON.stringify(TX);

const app = Fastify({ logger: false });
app.post('/api/*', async (_req, reply) => reply.code(201).type('application/json').send(body));
// The gateway resolves a token once (then caches it) through transactions-svc: any hash is a merchant here.
app.post('/internal/auth/resolve', async (req) => ({ merchantId: '019ac0de-0000-7000-8000-000000000001', tokenHash: (req.body as { tokenHash: string }).tokenHash }));
app.get('/*', async (_req, reply) => reply.code(200).send({ status: 'ok' }));

process.on('disconnect', () => process.exit(0));
app.listen({ host: '127.0.0.1', port: 0 }).then(() => {
  process.send!({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
});
