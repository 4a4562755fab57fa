/**
 * An interrupted CSV export (docs/api.md#viewing-transactions, Accept: text/csv) must give back everything it held.
 * A merchant who closes the download midway leaves nothing behind in the ui: its connection to
 * transactions-svc is released (the ui's pool holds 32), so after more dropped downloads than the
 * pool holds, the list still answers, the ui is still ready, and it still stops cleanly on SIGTERM
 * (its pool's close waits for every request to transactions-svc still running: one left would be
 * "killed by timeout", exit 1). How many idle keep-alive connections the pool keeps is its own
 * business, so they are not counted. The merchant may stream 12 exports at once here (2 by default):
 * a round's 10 and its 2 early drops, so each round also proves that transactions-svc frees an export's slot when it is dropped.
 */
import net from 'node:net';
import { api, eventually, startStack, type Merchant, type Stack, withDatabase } from './support/stack';
import { enterHandWrittenHistory } from './support/seed-history';

/** More than the ui's pool to transactions-svc holds (connections: 32, transactions-client.ts). */
const DROPS = 40;
/** Downloads dropped at once. */
const AT_ONCE = 10;
/** Requests dropped before any answer, per round. */
const EARLY = 2;
/** Rows of the export: megabytes of NDJSON, far more than the sockets and streams between buffer. */
const ROWS = 5000;

let stack: Stack;
let merchant: Merchant;

beforeAll(async () => {
  stack = await startStack('csv_interrupted', {
    RATE_LIMIT_PER_SECOND: '100000',
    // A round's downloads and its early drops: an early drop may reach transactions-svc only after
    // the round's check has seen every slot free, and hold one while the next round starts.
    EXPORT_CONCURRENCY_PER_MERCHANT: String(AT_ONCE + EARLY),
    EXPORT_CONCURRENCY: String(AT_ONCE + EARLY),
  });
  merchant = stack.createMerchant('Big exporter');
  // Written by SQL: thousands of rows in a moment (the export needs no events to list them).
  await withDatabase(stack, async (db) => {
    await db.query(
      `INSERT INTO transactions (id, merchant_id, type, status, amount, currency, order_id, description, last_sequence, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'deposit', 'completed', g, 'USD', 'bulk-' || g, repeat('x', 400), 1,
              now() - g * interval '1 second', now()
         FROM generate_series(1, ${ROWS}) g`,
      [merchant.merchantId],
    );
    await enterHandWrittenHistory(db, merchant.merchantId); // as if the product had written them
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const CSV_REQUEST = () => `GET /ui/viewTransaction HTTP/1.1\r\nhost: x\r\nserviceApiToken: ${merchant.apiToken}\r\naccept: text/csv\r\n\r\n`;

/**
 * Starts a CSV download over a raw socket, reads only its first bytes (a slow reader, as a
 * browser on a poor link), then drops the connection as a closed tab does. Resolves with the
 * answer's status line.
 */
function dropCsvDownload(): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(stack.ports['api-gateway'], '127.0.0.1');
    const drop = (statusLine: string) => {
      socket.destroy();
      resolve(statusLine);
    };
    socket.on('error', (err) => drop(`error: ${err.message}`));
    socket.setTimeout(10_000, () => drop('no answer in 10 s'));
    socket.write(CSV_REQUEST());
    socket.once('data', (first) => {
      socket.pause();
      setTimeout(() => drop(first.toString('latin1').split('\r\n')[0]!), 50);
    });
  });
}

/** Asks for the CSV and hangs up before any answer, while the export is still being prepared. */
function dropCsvRequest(): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(stack.ports['api-gateway'], '127.0.0.1', () => {
      socket.write(CSV_REQUEST());
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 5);
    });
    socket.on('error', () => resolve());
  });
}

/** transactions-svc's exports streaming now (its dw_exports_in_flight gauge). */
async function exportsInFlight(): Promise<number> {
  const text = await (await fetch(`${stack.transactions}/metrics`)).text();
  return Number(text.split('\n').find((l) => l.startsWith('dw_exports_in_flight '))?.split(' ')[1]);
}

async function settle(ms: number) {
  await new Promise((r) => setTimeout(r, ms));
}

describe('GET /ui/viewTransaction with Accept: text/csv, dropped by the client midway', () => {
  it(`releases the connection to transactions-svc each time: after ${DROPS} drops the list answers 200 at once and the ui is ready`, async () => {
    const call = api(stack, merchant.apiToken);
    expect((await call('GET', '/ui/viewTransaction?limit=1', undefined, { accept: 'application/json' })).status).toBe(200);

    const answers: string[] = [];
    for (let i = 0; i < DROPS; i += AT_ONCE) {
      answers.push(...(await Promise.all(Array.from({ length: AT_ONCE }, dropCsvDownload))));
      await Promise.all(Array.from({ length: EARLY }, dropCsvRequest));
      // Every dropped export lets go of its slot in transactions-svc before the next round.
      expect(await eventually(exportsInFlight, (n) => n === 0, 10_000)).toBe(0);
    }
    await settle(500); // let the ui see the closed sockets

    const started = Date.now();
    const list = await call('GET', '/ui/viewTransaction?limit=5', undefined, { accept: 'application/json' });
    expect(list.status).toBe(200);
    expect(list.json.items).toHaveLength(5);
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await fetch(`http://127.0.0.1:${stack.ports.ui}/readyz`)).status).toBe(200);
    expect(answers).toEqual(Array(DROPS).fill('HTTP/1.1 200 OK')); // each had begun to stream
  }, 120_000);

  it('still exports in full after the drops, and the ui exits 0 on SIGTERM', async () => {
    const full = await api(stack, merchant.apiToken)('GET', '/ui/viewTransaction', undefined, { accept: 'text/csv' });
    expect(full.status).toBe(200);
    expect(full.text.trim().split('\r\n')).toHaveLength(ROWS + 1);
    expect(await dropCsvDownload()).toBe('HTTP/1.1 200 OK'); // one more, just dropped as the signal comes
    expect(await stack.stop('ui')).toBe(0);
  }, 60_000);
});
