import { ConfigError } from '@dw/config';
import { callbackTopology, messagingNames } from '@dw/messaging';
import { connect } from 'amqplib';
import { createTestDatabase, type TestDatabase } from '@dw/db/testing';
import { outboxRelayProcess } from '../../src/outbox/relay-process';
import { AMQP_URL, deleteTopology, silent, uniquePrefix, waitUntil } from './relay-support';

const prefix = uniquePrefix('process');
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase('outbox-process');
});

afterAll(async () => {
  await deleteTopology(prefix);
  await database?.drop();
});

const config = () => ({ databaseUrl: database.url, amqpUrl: AMQP_URL, amqpPrefix: prefix });

describe('the relay as transactions-svc starts it', () => {
  it('refuses a malformed CALLBACK_RETRY_DELAYS_MS at boot, naming it', () => {
    expect(() => outboxRelayProcess(config(), silent, { CALLBACK_RETRY_DELAYS_MS: '5000,soon' })).toThrow(ConfigError);
    expect(() => outboxRelayProcess(config(), silent, { CALLBACK_RETRY_DELAYS_MS: '5000,soon' })).toThrow(/CALLBACK_RETRY_DELAYS_MS/);
  });

  it("asserts callback-svc's topology with the configured delays, so events always have a queue", async () => {
    const relay = outboxRelayProcess(config(), silent, { CALLBACK_RETRY_DELAYS_MS: '1000' });
    relay.start();
    const names = messagingNames(prefix);
    // Every queue of it, the 1 s retry queue included: the relay declares them one by one.
    const topology = callbackTopology({ prefix, retryDelaysMs: [1000] });
    expect(topology.queues.map((q) => q.name)).toContain(names.retryQueue(1000));
    const connection = await connect(AMQP_URL);
    try {
      await waitUntil('every queue of the topology, and tx.events', async () => {
        const channel = await connection.createChannel();
        channel.on('error', () => undefined);
        try {
          for (const q of topology.queues) await channel.checkQueue(q.name);
          await channel.checkExchange(names.eventsExchange);
          await channel.close();
          return true;
        } catch {
          return false;
        }
      });
    } finally {
      await connection.close();
      await relay.stop();
    }
  });
});
