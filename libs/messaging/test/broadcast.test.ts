import { AmqpConnection, messagingNames, openTokenRotationPublisher, subscribeTokenRotations, tokenTopology, type TokenRotationPublisher } from '../src';
import { AMQP_URL, deleteAll, forceCloseConnection, openAdmin, recordingLogger, uniquePrefix, waitUntil } from './support';

const prefix = uniquePrefix('broadcast');
const managers: AmqpConnection[] = [];

function gateway(name: string) {
  const conn = new AmqpConnection({
    url: AMQP_URL,
    name: `${prefix}${name}`,
    logger: recordingLogger(),
    reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
  });
  managers.push(conn);
  const rotated: string[] = [];
  let subscriptions = 0;
  subscribeTokenRotations(conn, prefix, (merchantId) => rotated.push(merchantId), {
    onSubscribed: () => subscriptions++,
  });
  conn.start();
  return { conn, rotated, subscriptions: () => subscriptions };
}

/** The merchant CLI's publisher, opened once as the CLI does before it rotates. */
let publisher: TokenRotationPublisher;

beforeAll(async () => {
  publisher = await openTokenRotationPublisher(AMQP_URL, prefix);
});

afterAll(async () => {
  await publisher?.close();
  await Promise.all(managers.map((m) => m.close()));
  await deleteAll(tokenTopology(prefix));
});

describe('token rotation broadcast', () => {
  it('reaches every subscribed gateway', async () => {
    const a = gateway('gw-a');
    const b = gateway('gw-b');
    await waitUntil('both subscribed', () => a.subscriptions() === 1 && b.subscriptions() === 1);

    await publisher.publish('merchant-1');
    await waitUntil('both heard it', () => a.rotated.length === 1 && b.rotated.length === 1);
    expect(a.rotated).toEqual(['merchant-1']);
    expect(b.rotated).toEqual(['merchant-1']);
  });

  it('re-subscribes after a reconnect, telling the subscriber so it can drop what it may have missed', async () => {
    const c = gateway('gw-c');
    await waitUntil('subscribed', () => c.subscriptions() === 1);
    expect(await forceCloseConnection(`${prefix}gw-c`)).toBe(1);
    await waitUntil('subscribed again', () => c.subscriptions() === 2);

    await publisher.publish('merchant-2');
    await waitUntil('heard after the reconnect', () => c.rotated.includes('merchant-2'));
  });

  it('publishes to the prefixed fanout exchange (it exists after a publish)', async () => {
    await publisher.publish('merchant-3');
    const { connection, channel } = await openAdmin();
    await expect(channel.checkExchange(messagingNames(prefix).tokenExchange)).resolves.toBeDefined();
    await connection.close();
  });
});
