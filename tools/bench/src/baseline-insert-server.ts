/**
 * The baseline for the create path: a single Fastify process doing one pg `INSERT … RETURNING` per
 * request into its own table in its own database (argv[2] is its connection string). It stands for
 * what this machine can do for "accept a JSON deposit, write one row, answer 201".
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.argv[2], max: 10 });
const app = Fastify({ logger: false });

app.post('/api/createDeposit', async (req, reply) => {
  const body = req.body as { amount?: string; currency?: string; orderId?: string };
  const { rows } = await pool.query(
    'INSERT INTO deposits (amount, currency, order_id) VALUES ($1, $2, $3) RETURNING id, amount::text, currency, order_id, created_at',
    [body.amount, body.currency, body.orderId],
  );
  return reply.code(201).send(rows[0]);
});

process.on('disconnect', () => process.exit(0));
app.listen({ host: '127.0.0.1', port: 0 }).then(() => {
  process.send!({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
});
