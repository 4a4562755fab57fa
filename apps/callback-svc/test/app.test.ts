import { loadCallbackConfig } from '@dw/config';
import { callbackTopology, deleteTopology, messagingNames, type AmqpConnection } from '@dw/messaging';
import { createLogger } from '@dw/telemetry';
import { testPrefix } from '@dw/testing';
import { connect } from 'amqplib';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { buildApp } from '../src/app';
import { createBrokerConnection } from '../src/broker';
import { createPool } from '@dw/db';

const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
// SELECT 1 needs no tables: the maintenance database serves, and this file creates none of its own.
const DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const prefix = testPrefix('callback-svc.app');
const config = loadCallbackConfig({
  AMQP_URL,
  AMQP_PREFIX: prefix,
  DATABASE_URL,
  CALLBACK_RETRY_DELAYS_MS: '5000,10000,20000,40000,80000',
});
const logger = createLogger('callback-svc-test', 'silent');

interface Running {
  app: FastifyInstance;
  amqp: AmqpConnection;
  pool: Pool;
}

async function start(overrides: { amqpUrl?: string; databaseUrl?: string } = {}): Promise<Running> {
  const pool = createPool(overrides.databaseUrl ?? config.databaseUrl, config.databasePoolSize, { applicationName: 'dw-callback-svc' });
  const amqp = createBrokerConnection({ ...config, ...(overrides.amqpUrl ? { amqpUrl: overrides.amqpUrl } : {}) }, logger);
  amqp.start();
  const app = buildApp({ logger, amqp, pool });
  await app.ready();
  return { app, amqp, pool };
}

async function stop({ app, amqp, pool }: Running): Promise<void> {
  await app.close();
  await amqp.close();
  await pool.end();
}

let healthy: Running;

beforeAll(async () => {
  healthy = await start();
  await healthy.amqp.whenConnected();
});

afterAll(async () => {
  await stop(healthy);
  const connection = await connect(AMQP_URL);
  await deleteTopology(await connection.createChannel(), callbackTopology({ prefix, retryDelaysMs: config.retryDelaysMs }));
  await connection.close();
});

describe('GET /healthz', () => {
  it('answers 200 while the process is alive', async () => {
    const res = await healthy.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });
});

describe('GET /readyz', () => {
  it('answers 200 when RabbitMQ and PostgreSQL are both reachable', async () => {
    const res = await healthy.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ready', checks: { rabbitmq: 'up', postgresql: 'up' } });
  });

  it('answers 503 problem+json naming PostgreSQL when the database cannot be reached', async () => {
    const svc = await start({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/x' });
    try {
      await svc.amqp.whenConnected();
      const res = await svc.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(res.json().detail).toMatch(/postgresql/);
      expect(res.json().detail).not.toMatch(/rabbitmq/);
    } finally {
      await stop(svc);
    }
  });

  it('answers 503 problem+json naming RabbitMQ when the broker connection is not up', async () => {
    const svc = await start({ amqpUrl: 'amqp://guest:guest@127.0.0.1:1' });
    try {
      const res = await svc.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(res.json().detail).toMatch(/rabbitmq/);
      expect(res.json().detail).not.toMatch(/postgresql/);
    } finally {
      await stop(svc);
    }
  });
});

describe('GET /metrics', () => {
  it('answers Prometheus text', async () => {
    const res = await healthy.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/^# HELP /m);
    expect(res.body).toMatch(/^process_cpu_user_seconds_total \d/m);
  });
});

describe('RabbitMQ topology', () => {
  it('exists on the broker once the service has connected: the delivery queue and one retry queue per delay', async () => {
    const names = messagingNames(prefix);
    const connection = await connect(AMQP_URL);
    try {
      const channel = await connection.createChannel();
      await expect(channel.checkQueue(names.deliverQueue)).resolves.toMatchObject({ queue: names.deliverQueue });
      for (const label of ['5s', '10s', '20s', '40s', '80s']) {
        await expect(channel.checkQueue(`${prefix}callbacks.retry.${label}`)).resolves.toBeDefined();
      }
      await expect(channel.checkExchange(names.eventsExchange)).resolves.toBeDefined();
    } finally {
      await connection.close();
    }
  });
});
