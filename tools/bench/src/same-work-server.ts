/**
 * Issue 20's "same work, one process" baseline (argv: database URL, AMQP URL, queue prefix, callback
 * URL). One Fastify process doing what a create costs end to end, with the product's own choices:
 * - POST /api/createDeposit validated by the contract's CreateDepositBody (libs/contracts), the
 *   serviceApiToken looked up in an in-memory map (the gateway's cached lookup, without the hop);
 * - the product's create statement itself (insertStatement of
 *   apps/transactions-svc/src/domain/transactions-repo.ts: transaction, event, delivery row, outbox
 *   row, ledger entries), batched by the same group commit (@dw/batching, same settings);
 * - the relay's own pass (relayBatch of apps/transactions-svc/src/outbox/relay-batch.ts: claim …
 *   FOR UPDATE SKIP LOCKED, confirmed publish, DELETE, in one transaction), woken in process after
 *   each commit as the product's doorbell, again while a pass was full;
 * - a consumer of the same quorum queue topology (callbackTopology) that signs the body with the
 *   Standard Webhooks HMAC (as apps/callback-svc/src/delivery/sign-callback.ts), POSTs it with
 *   undici, judges the reply as callback-svc does (replyOutcome of
 *   apps/callback-svc/src/delivery/attempt-result.ts: only a 200 succeeds), records the attempt and
 *   the delivery's status with callback-svc's batched statement (recordOutcomes of
 *   apps/callback-svc/src/delivery/record-attempt.ts), then acks.
 * What it leaves out is what the microservices add: the hops, the gateway's proof, the claim row.
 *
 * argv[6], the role, splits it the way the product is split, for the bench's "same work, split"
 * baseline (the cost of the hops alone): `create` serves the HTTP side and runs the relay, `deliver`
 * only consumes and delivers (it looks each merchant up once, as callback-svc caches it); the
 * default, `whole`, is both in one process. A bare proxy in front stands for the gateway.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import amqp, { type ConsumeMessage } from 'amqplib';
import Fastify from 'fastify';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { groupCommit } from '@dw/batching';
import { apiTokenHash, CreateDepositBody, type Transaction } from '@dw/contracts';
import { query } from '@dw/db';
import { assertTopology, callbackTopology, MERCHANT_HEADER, messagingNames } from '@dw/messaging';
import { insertStatement, type NewTransaction } from '../../../apps/transactions-svc/src/domain/transactions-repo';
import { relayBatch } from '../../../apps/transactions-svc/src/outbox/relay-batch';
import { replyOutcome } from '../../../apps/callback-svc/src/delivery/attempt-result';
import { recordOutcomes, type Outcome } from '../../../apps/callback-svc/src/delivery/record-attempt';
import { webhookHeaders } from '../../../apps/callback-svc/src/delivery/sign-callback';

const [dbUrl, amqpUrl, prefix, callbackUrl, role = 'whole'] = process.argv.slice(2) as [string, string, string, string, string?];
if (!['whole', 'create', 'deliver'].includes(role)) throw new Error(`unknown role ${role}`);

interface Merchant {
  id: string;
  secret: string;
  url: string;
}

async function main() {
  const pool = new pg.Pool({ connectionString: dbUrl, max: 10 });
  const names = messagingNames(prefix);
  const conn = await amqp.connect(amqpUrl);
  const setup = await conn.createChannel();
  await assertTopology(setup, callbackTopology({ prefix, retryDelaysMs: [1000] }));
  await setup.close();
  process.on('disconnect', () => process.exit(0));
  if (role !== 'create') await consume(pool, conn, names.deliverQueue);
  if (role === 'deliver') return void process.send!({});

  // One merchant, its token kept in memory as the gateway's cache would.
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const merchant: Merchant = { id: randomUUID(), secret: `whsec_${randomBytes(24).toString('base64')}`, url: callbackUrl };
  await pool.query(
    `INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret, deposit_callback_url) VALUES ($1, 'same-work', $2, $3, $4)`,
    [merchant.id, apiTokenHash(token), merchant.secret, merchant.url],
  );
  const tokens = new Map([[token, merchant]]);

  const pub = await conn.createConfirmChannel();

  // The relay: one pass per wake-up, again while a pass was full (as outbox-relay.ts).
  let relaying = false;
  let rang = false;
  const relay = async () => {
    if (relaying) return void (rang = true);
    relaying = true;
    try {
      do {
        rang = false;
        const { more } = await relayBatch({ pool, table: 'outbox', channel: pub, exchange: names.eventsExchange, batchSize: 100, confirmTimeoutMs: 30_000, track: (work) => work });
        if (more) rang = true;
      } while (rang);
    } catch (err) {
      console.error('same-work relay:', err);
    } finally {
      relaying = false;
    }
  };

  const batch = groupCommit(async (items: NewTransaction[]) => {
    const rows = await query<{ tx: Transaction; merchant_id: string }>(pool, insertStatement(items), 'create_transactions');
    if (rows.length > 0) void relay();
    const byOrder = new Map(rows.map((r) => [r.tx.orderId, r.tx]));
    return items.map((t) => byOrder.get(t.orderId) ?? null);
  }, { maxBatch: 100, concurrency: 4 });

  const app = Fastify({ logger: false });
  app.post('/api/createDeposit', { schema: { body: CreateDepositBody } }, async (req, reply) => {
    const m = tokens.get(String(req.headers.serviceapitoken ?? ''));
    if (!m) return reply.code(401).type('application/problem+json').send({ type: 'about:blank', title: 'Unauthorized', status: 401 });
    const body = req.body as CreateDepositBody;
    const tx = await batch({
      merchantId: m.id,
      type: 'deposit',
      amount: body.amount,
      currency: body.currency,
      orderId: body.orderId,
      description: body.description ?? null,
      metadata: body.metadata ?? {},
      destination: null,
      traceparent: null,
    });
    if (tx instanceof Error) throw tx;
    if (!tx) return reply.code(409).type('application/problem+json').send({ type: 'about:blank', title: 'Conflict', status: 409 });
    return reply.code(201).send(tx);
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send!({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, token });
}

/** The consumer: sign, POST, record (group commit as callback-svc), ack. */
async function consume(pool: pg.Pool, conn: amqp.ChannelModel, queue: string): Promise<void> {
  const sub = await conn.createChannel();
  const merchants = new Map<string, Promise<Merchant | undefined>>();
  const merchantOf = (id: string) => {
    let m = merchants.get(id);
    if (!m) {
      m = pool
        .query<Merchant>(`SELECT id, callback_signing_secret AS secret, deposit_callback_url AS url FROM merchants WHERE id = $1::uuid`, [id])
        .then((r) => r.rows[0]);
      merchants.set(id, m);
    }
    return m;
  };
  const http = new HttpPool(new URL(callbackUrl).origin, { connections: 64 });
  const callbackPath = new URL(callbackUrl).pathname;
  const record = groupCommit((outcomes: Outcome[]) => recordOutcomes(pool, outcomes), { maxBatch: 100, concurrency: 2 });
  await sub.prefetch(100);
  await sub.consume(queue, (msg: ConsumeMessage | null) => {
    if (!msg) return;
    void (async () => {
      const eventId = String(msg.properties.messageId);
      const m = await merchantOf(String(msg.properties.headers?.[MERCHANT_HEADER]));
      if (!m) return sub.ack(msg);
      const at = new Date();
      const started = performance.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      try {
        const res = await http.request({
          path: callbackPath,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...webhookHeaders([m.secret], eventId, msg.content, at) },
          body: msg.content,
        });
        statusCode = res.statusCode;
        await res.body.dump();
      } catch (err) {
        error = (err as Error).message;
      }
      // As callback-svc judges an attempt: a failed exchange is a network error, else only 200 succeeds.
      const outcome = error ? 'network_error' : replyOutcome(statusCode);
      await record({
        eventId,
        attempt: 1,
        status: outcome === 'succeeded' ? 'succeeded' : 'retrying',
        result: { outcome, at, url: m.url, statusCode, error, durationMs: Math.round(performance.now() - started) },
        trigger: 'automatic',
      });
      sub.ack(msg);
    })().catch((err) => console.error('same-work consumer:', err));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
