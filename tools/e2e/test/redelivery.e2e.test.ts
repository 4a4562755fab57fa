/// <reference lib="dom" />
// (page.waitForFunction callbacks run in the browser: they use DOM globals.)
/**
 * Redelivery and bulk recovery (docs/api.md#redelivery-and-recovery, 5) across the real processes: a redelivered event
 * arrives with the same webhook-id and body and a fresh valid signature (standardwebhooks), its
 * attempts are recorded as manual beside the earlier ones; 409 while a series is pending or
 * retrying; 404 for an unknown or another merchant's event; recovery of a window restarts exactly
 * its failed and skipped deliveries, once; and the two buttons of the viewer in real Chromium.
 */
import type { Browser, Page } from 'playwright-core';
import { startCallbackReceiver, type CallbackReceiver, type Reaction } from '@dw/testing';
import { isCspViolation, launchChromium, openPage, type PageLog } from './support/browser';
import { verifies } from './support/signatures';
import { api, startStack, type Merchant, type Stack } from './support/stack';

// A long first wait keeps a delivery `retrying` long enough to be seen; the rest settle a failing
// delivery's 6 attempts in about 2.5 s.
const DELAYS = [1500, 200, 200, 200, 200];

let stack: Stack;
let receiver: CallbackReceiver;
let browser: Browser;
let merchant: Merchant;
let other: Merchant;
/** How the receiver answers each orderId (default 200); tests flip them. */
const answers = new Map<string, (nth: number) => Reaction>();
const logs: PageLog[] = [];
/** A transaction whose delivery has settled (the first test's), for the no-script page. */
let settledTxId: string;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  receiver.respond = (req) => {
    const orderId = String(req.json?.data?.orderId ?? '');
    const answer = answers.get(orderId);
    return answer ? answer(receiver.received.filter((r) => r.json?.data?.orderId === orderId).length) : 200;
  };
  stack = await startStack('redelivery', {
    CALLBACK_RETRY_DELAYS_MS: DELAYS.join(','),
    CALLBACK_TIMEOUT_MS: '3000',
    RATE_LIMIT_PER_SECOND: '1000',
  });
  merchant = stack.createMerchant('Recovering merchant');
  other = stack.createMerchant('Other merchant');
  for (const m of [merchant, other]) await api(stack, m.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/deposit` });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await receiver?.close();
});

let n = 0;
const uniqueOrderId = (prefix: string) => `${prefix}-${Date.now()}-${++n}`;

async function create(m: Merchant, type: 'deposit' | 'withdraw', orderId: string): Promise<{ id: string; eventId: string }> {
  const body: Record<string, string> = { amount: '10.00', currency: 'USD', orderId };
  if (type === 'withdraw') body.destination = 'wallet-1';
  const res = await api(stack, m.apiToken)('POST', type === 'deposit' ? '/api/createDeposit' : '/api/createWithdraw', body);
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  const detail = await view(m, res.json.id);
  return { id: res.json.id, eventId: detail.events[0].id };
}

const view = async (m: Merchant, id: string) =>
  (await api(stack, m.apiToken)('GET', `/ui/viewTransaction?id=${id}`, undefined, { accept: 'application/json' })).json;

/** The first event's delivery once `ok` holds (polls the viewer's JSON). */
async function deliveryWhen(m: Merchant, id: string, ok: (d: any) => boolean, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = (await view(m, id)).events[0].delivery;
    if (ok(d)) return d;
    if (Date.now() > deadline) throw new Error(`delivery not as expected in ${timeoutMs} ms: ${JSON.stringify(d)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const settledAs = (m: Merchant, id: string, status: string) => deliveryWhen(m, id, (d) => d.status === status);

const redeliver = (eventId: unknown, m = merchant) => api(stack, m.apiToken)('POST', '/api/redeliverCallback', { eventId });
const recover = (body: unknown, m = merchant) => api(stack, m.apiToken)('POST', '/api/recoverCallbacks', body);
const arrivalsOf = (eventId: string) => receiver.received.filter((r) => r.headers['webhook-id'] === eventId);
const triggers = (d: any) => d.attempts.map((a: any) => [a.attempt, a.trigger]);
const automatic = (count: number) => Array.from({ length: count }, (_, i) => [i + 1, 'automatic']);

describe('POST /api/redeliverCallback', () => {
  it('sends a failed event again with the same webhook-id and body and a fresh valid signature; its attempts are manual', async () => {
    const orderId = uniqueOrderId('rd-failed');
    answers.set(orderId, () => 500);
    const tx = await create(merchant, 'deposit', orderId);
    await settledAs(merchant, tx.id, 'failed');
    const first = arrivalsOf(tx.eventId);
    expect(first).toHaveLength(6);

    answers.set(orderId, () => 200);
    const res = await redeliver(tx.eventId);
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json).toMatchObject({ id: tx.eventId, type: 'deposit.pending', delivery: { status: 'pending' } });
    expect(triggers(res.json.delivery)).toEqual(automatic(6));

    const [again] = await receiver.waitFor(7, (r) => r.headers['webhook-id'] === tx.eventId).then((all) => all.slice(6));
    expect(again!.body).toBe(first[0]!.body);
    expect(again!.headers['webhook-id']).toBe(tx.eventId);
    expect(verifies(merchant.callbackSigningSecret, again!)).toBe(true);
    expect(Number(again!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(first[5]!.headers['webhook-timestamp']));

    const delivery = await settledAs(merchant, tx.id, 'succeeded');
    expect(triggers(delivery)).toEqual([...automatic(6), [7, 'manual']]);
    expect(delivery.attempts[6]).toMatchObject({ statusCode: 200, error: null });
    settledTxId = tx.id;
  });

  it('gives a manual series that keeps failing the schedule again: 6 more attempts, then failed', async () => {
    const orderId = uniqueOrderId('rd-still-down');
    answers.set(orderId, () => 500);
    const tx = await create(merchant, 'deposit', orderId);
    await settledAs(merchant, tx.id, 'failed');
    expect((await redeliver(tx.eventId)).status).toBe(202);
    const delivery = await deliveryWhen(merchant, tx.id, (d) => d.status === 'failed' && d.attempts.length === 12);
    expect(triggers(delivery)).toEqual([...automatic(6), ...[7, 8, 9, 10, 11, 12].map((a) => [a, 'manual'])]);
    const hits = arrivalsOf(tx.eventId);
    expect(hits).toHaveLength(12);
    // The series waited its first delay again (1.5 s) after attempt 7.
    expect(hits[7]!.at - hits[6]!.at).toBeGreaterThanOrEqual(DELAYS[0]!);
  });

  it('answers 409 conflict while the delivery is pending (an attempt in flight), then 202 once it succeeded', async () => {
    const orderId = uniqueOrderId('rd-slow');
    answers.set(orderId, (nth) => (nth === 1 ? { status: 200, afterMs: 2000 } : 200));
    const tx = await create(merchant, 'deposit', orderId);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === tx.eventId);
    const res = await redeliver(tx.eventId);
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ status: 409, code: 'conflict' });
    await settledAs(merchant, tx.id, 'succeeded');
    expect((await redeliver(tx.eventId)).status).toBe(202);
    await receiver.waitFor(2, (r) => r.headers['webhook-id'] === tx.eventId);
  });

  it('answers 409 conflict while the delivery is retrying, and sends nothing more for it', async () => {
    const orderId = uniqueOrderId('rd-retrying');
    answers.set(orderId, (nth) => (nth === 1 ? 500 : 200));
    const tx = await create(merchant, 'deposit', orderId);
    await deliveryWhen(merchant, tx.id, (d) => d.status === 'retrying');
    expect((await redeliver(tx.eventId)).status).toBe(409);
    const delivery = await settledAs(merchant, tx.id, 'succeeded');
    expect(triggers(delivery)).toEqual(automatic(2));
    await new Promise((r) => setTimeout(r, 500));
    expect(arrivalsOf(tx.eventId)).toHaveLength(2);
  });

  it("answers 404 for an unknown event and for another merchant's event, with the same body", async () => {
    const theirs = await create(other, 'deposit', uniqueOrderId('rd-theirs'));
    await settledAs(other, theirs.id, 'succeeded');
    const foreign = await redeliver(theirs.eventId);
    const unknown = await redeliver('evt_00000000000000000000000000000000');
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    const { requestId: _a, ...foreignBody } = foreign.json;
    const { requestId: _b, ...unknownBody } = unknown.json;
    expect(foreignBody).toEqual(unknownBody);
    expect(foreignBody.code).toBe('not_found');
    await new Promise((r) => setTimeout(r, 500));
    expect(arrivalsOf(theirs.eventId)).toHaveLength(1);
  });

  it('answers 400 problem+json for a malformed body, and 401 without a valid token', async () => {
    for (const body of [{}, { eventId: 'not-an-event' }, { eventId: 7 }, { eventId: 'evt_1', extra: true }]) {
      const res = await api(stack, merchant.apiToken)('POST', '/api/redeliverCallback', body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json).toMatchObject({ code: 'validation_failed', errors: expect.any(Array) });
    }
    expect((await api(stack, 'dwk_wrong')('POST', '/api/redeliverCallback', { eventId: 'evt_1' })).status).toBe(401);
  });
});

describe('POST /api/recoverCallbacks', () => {
  it('restarts exactly the failed and skipped deliveries of the window, once, each arriving with its id and a valid signature', async () => {
    const rec = stack.createMerchant('Merchant whose endpoint was down');
    const call = api(stack, rec.apiToken);
    await call('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/rec-deposit` });
    const since = new Date(Date.now() - 1000).toISOString();
    const ids = { fail1: uniqueOrderId('rec-fail'), skip1: uniqueOrderId('rec-skip'), ok: uniqueOrderId('rec-ok'), fail2: uniqueOrderId('rec-fail'), skip2: uniqueOrderId('rec-skip') };
    answers.set(ids.fail1, () => 503);
    answers.set(ids.fail2, () => 'reset');
    const fail1 = await create(rec, 'deposit', ids.fail1);
    const skip1 = await create(rec, 'withdraw', ids.skip1);
    const ok = await create(rec, 'deposit', ids.ok);
    const fail2 = await create(rec, 'deposit', ids.fail2);
    const skip2 = await create(rec, 'withdraw', ids.skip2);
    await settledAs(rec, fail1.id, 'failed');
    await settledAs(rec, fail2.id, 'failed');
    await settledAs(rec, skip1.id, 'skipped');
    await settledAs(rec, skip2.id, 'skipped');
    await settledAs(rec, ok.id, 'succeeded');
    const before = new Map([fail1, fail2].map((t) => [t.eventId, arrivalsOf(t.eventId)[0]!.body]));

    // The endpoint is back, and a withdraw URL is set now.
    answers.set(ids.fail1, () => 200);
    answers.set(ids.fail2, () => 200);
    await call('PUT', '/api/updateCallbackUrlWithdraw', { url: `${receiver.url}/rec-withdraw` });
    const res = await recover({ since }, rec);
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ recovered: 4 });
    // Safe to call twice: nothing is queued again.
    expect((await recover({ since }, rec)).json).toEqual({ recovered: 0 });

    for (const t of [fail1, fail2, skip1, skip2]) {
      const d = await settledAs(rec, t.id, 'succeeded');
      expect(d.attempts.at(-1).trigger).toBe('manual');
    }
    await new Promise((r) => setTimeout(r, 1000)); // room for any duplicate to show up
    for (const t of [fail1, fail2]) {
      const hits = arrivalsOf(t.eventId);
      expect(hits).toHaveLength(7);
      expect(hits[6]!.body).toBe(before.get(t.eventId));
      expect(verifies(rec.callbackSigningSecret, hits[6]!)).toBe(true);
    }
    for (const t of [skip1, skip2]) {
      const hits = arrivalsOf(t.eventId);
      expect(hits).toHaveLength(1);
      expect(hits[0]!.path).toBe('/rec-withdraw');
      expect(verifies(rec.callbackSigningSecret, hits[0]!)).toBe(true);
      expect(triggers((await view(rec, t.id)).events[0].delivery)).toEqual([[1, 'manual']]);
    }
    expect(arrivalsOf(ok.eventId)).toHaveLength(1);
    expect(triggers((await view(rec, ok.id)).events[0].delivery)).toEqual(automatic(1));
    // Nothing is left to recover.
    expect((await recover({ since }, rec)).json).toEqual({ recovered: 0 });
  });

  it('answers 400 naming the limit for a window more than 14 days back, and 400 for bad dates or fields', async () => {
    const old = await recover({ since: new Date(Date.now() - 15 * 86_400_000).toISOString() });
    expect(old.status).toBe(400);
    expect(old.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(old.json.errors).toEqual([{ path: '/since', message: 'must be at most 14 days ago' }]);
    const now = Date.now();
    for (const body of [
      {},
      { since: 'yesterday' },
      { since: '2026-02-30T00:00:00Z' },
      { since: new Date(now - 60_000).toISOString(), until: new Date(now - 120_000).toISOString() },
      { since: new Date(now - 60_000).toISOString(), type: 'refund' },
      { since: new Date(now - 60_000).toISOString(), extra: 1 },
    ]) {
      const res = await recover(body);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'validation_failed', errors: expect.any(Array) });
    }
  });

  it('is in the OpenAPI document beside redeliverCallback, and needs a token', async () => {
    const doc = (await api(stack, undefined)('GET', '/openapi.json')).json;
    expect(doc.paths['/api/recoverCallbacks'].post.responses['202']).toBeDefined();
    expect(doc.paths['/api/redeliverCallback'].post.responses['202']).toBeDefined();
    expect((await api(stack, undefined)('POST', '/api/recoverCallbacks', { since: new Date().toISOString() })).status).toBe(401);
  });
});

describe('the viewer (/ui) in Chromium', () => {
  async function signedIn(m: Merchant): Promise<{ page: Page; close: () => Promise<void> }> {
    const opened = await openPage(browser, { timezoneId: 'UTC', locale: 'en-GB' });
    logs.push(opened.log);
    await opened.page.goto(`${stack.gateway}/ui`);
    await opened.page.getByLabel('API token').fill(m.apiToken);
    await opened.page.getByRole('button', { name: 'Show transactions' }).click();
    return { page: opened.page, close: () => opened.context.close() };
  }

  /** A new merchant's deposit whose callback failed 6 times; its endpoint keeps answering 500. */
  async function failedDeposit(name: string, prefix: string) {
    const m = stack.createMerchant(name);
    await api(stack, m.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/ui-deposit` });
    const orderId = uniqueOrderId(prefix);
    answers.set(orderId, () => 500);
    const tx = await create(m, 'deposit', orderId);
    await settledAs(m, tx.id, 'failed');
    return { m, orderId, tx };
  }

  it('"Redeliver" on a failed event starts a new series; the page shows its attempt as manual', async () => {
    const { m, orderId, tx } = await failedDeposit('Viewer merchant', 'UI-REDELIVER');
    answers.set(orderId, () => 200);

    const { page, close } = await signedIn(m);
    await page.getByRole('link', { name: orderId }).click();
    const event = page.locator('#detail-body .timeline > li').first();
    const button = event.getByRole('button', { name: 'Redeliver' });
    await button.waitFor();
    await button.click();
    await page.waitForFunction(
      () => {
        const li = document.querySelector('#detail-body .timeline > li');
        return li?.querySelector('.badge')?.textContent === 'succeeded' && li.querySelector('[data-trigger="manual"]') !== null;
      },
      undefined,
      { timeout: 20_000 },
    );
    // All 7 are on the page; 1 and 2 in the closed "Show all 7 attempts" (the latest 5 show).
    const attempts = await event.locator('table.attempts tbody tr td[data-label="Attempt"]').allTextContents();
    expect(attempts.map((t) => t.replace(/\s+/g, ' ').trim())).toEqual(['1', '2', '3', '4', '5', '6', '7 manual']);
    expect(await event.getByRole('button', { name: 'Redeliver' }).count()).toBe(1); // settled again: offered again
    expect(arrivalsOf(tx.eventId)).toHaveLength(7);
    await close();
  });

  it('shows the latest 5 attempts of an event with 12, all 12 on "Show all", still open while a new series refreshes the page', async () => {
    const { m, orderId, tx } = await failedDeposit('Viewer merchant 12', 'UI-MANY');
    expect((await redeliver(tx.eventId, m)).status).toBe(202);
    await deliveryWhen(m, tx.id, (d) => d.status === 'failed' && d.attempts.length === 12);

    const { page, close } = await signedIn(m);
    await page.getByRole('link', { name: orderId }).click();
    const event = page.locator('#detail-body .timeline > li').first();
    await event.locator('table.attempts').first().waitFor({ state: 'attached' });
    /** The attempt numbers a reader sees, top to bottom. */
    const shown = () =>
      event.locator('table.attempts tbody tr td[data-label="Attempt"]').evaluateAll((tds) =>
        tds.filter((td) => td.checkVisibility()).map((td) => Number.parseInt(td.textContent!, 10)),
      );
    expect(await shown()).toEqual([8, 9, 10, 11, 12]);
    await event.getByText('Show all 12 attempts').click();
    expect(await shown()).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));

    // Another failing series: the page refreshes itself until it settles, the list stays open.
    await event.getByRole('button', { name: 'Redeliver' }).click();
    await page.waitForFunction(
      () => document.querySelectorAll('#detail-body .timeline > li:first-child table.attempts tbody tr').length === 18 &&
        document.querySelector('#detail-body .timeline > li .badge')?.textContent === 'failed',
      undefined,
      { timeout: 20_000 },
    );
    expect(await shown()).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
    await close();
  });

  it('"Recover failed since…" sends the failed callbacks of the window again and says how many', async () => {
    const m = stack.createMerchant('Viewer merchant 2');
    await api(stack, m.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/ui-deposit-2` });
    const start = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
    const orderIds = [uniqueOrderId('UI-REC'), uniqueOrderId('UI-REC')];
    for (const id of orderIds) answers.set(id, () => 500);
    const txs = [await create(m, 'deposit', orderIds[0]!), await create(m, 'deposit', orderIds[1]!)];
    for (const t of txs) await settledAs(m, t.id, 'failed');
    for (const id of orderIds) answers.set(id, () => 200);

    const { page, close } = await signedIn(m);
    const panel = page.locator('#health-body [data-recover]');
    await panel.waitFor();
    // No time chosen: the browser says so at the field, and nothing is sent.
    const posts: string[] = [];
    page.on('request', (r) => void (r.method() === 'POST' && posts.push(r.url())));
    await panel.getByRole('button', { name: 'Recover failed since…' }).click();
    expect(await panel.getByLabel('Failed since').evaluate((el) => (el as HTMLInputElement).validity.valueMissing)).toBe(true);
    expect(await panel.locator('.action-status').textContent()).toBe('');
    expect(posts).toEqual([]);
    // datetime-local, in the browser's zone (UTC here).
    await panel.getByLabel('Failed since').fill(start.toISOString().slice(0, 19));
    await panel.getByRole('button', { name: 'Recover failed since…' }).click();
    await page.waitForFunction(() => /Sending 2 callbacks again/.test(document.querySelector('#health-body [data-recover] .action-status')?.textContent ?? ''));
    for (const t of txs) {
      const d = await settledAs(m, t.id, 'succeeded');
      expect(triggers(d)).toEqual([...automatic(6), [7, 'manual']]);
    }

    // A second click finds nothing left to recover.
    await panel.getByLabel('Failed since').fill(start.toISOString().slice(0, 19));
    await panel.getByRole('button', { name: 'Recover failed since…' }).click();
    await page.waitForFunction(() => /Nothing to recover/.test(document.querySelector('#health-body [data-recover] .action-status')?.textContent ?? ''));

    // Beyond 14 days: the API's 400 is shown, naming the limit.
    await panel.getByLabel('Failed since').fill(new Date(Date.now() - 20 * 86_400_000).toISOString().slice(0, 19));
    await panel.getByRole('button', { name: 'Recover failed since…' }).click();
    await page.waitForFunction(() => /14 days/.test(document.querySelector('#health-body [data-recover] .action-status.error')?.textContent ?? ''));
    await close();
  });

  it('hides both actions on the no-script pages, which cannot send the token header', async () => {
    const opened = await openPage(browser, { javaScriptEnabled: false });
    await opened.context.setExtraHTTPHeaders({ serviceApiToken: merchant.apiToken, accept: 'text/html' });
    await opened.page.goto(`${stack.gateway}/ui/viewTransaction?id=${settledTxId}`);
    expect(await opened.page.locator('[data-action="redeliver"]').count()).toBe(1);
    expect(await opened.page.locator('[data-action="redeliver"]').isVisible()).toBe(false);
    await opened.page.goto(`${stack.gateway}/ui/endpointHealth`);
    expect(await opened.page.locator('[data-action="recover"]').isVisible()).toBe(false);
    await opened.context.close();
  });

  it('broke no Content-Security-Policy rule and threw no page error', () => {
    const problems = logs.flatMap((l) => l.problems);
    expect(problems.filter(isCspViolation)).toEqual([]);
    // (Chromium also logs every non-2xx load as an error: the 400 above is one, on purpose.)
    expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
  });
});
