/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser: they use DOM globals.)
/**
 * The merchant's transaction viewer (docs/api.md#viewing-transactions, issue 4) in real headless Chromium against the
 * four real processes: sign in with the token, list, filter, page, open one with its callbacks,
 * hostile data shown as text, sign out, the server-rendered pages with JavaScript off, the CSP.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { isCspViolation, launchChromium, openPage, saveScreenshot, type PageLog } from './support/browser';
import { ADMIN_TOKEN, api, startStack, type Merchant, type Stack } from './support/stack';

const RETRY_DELAYS_MS = '500,1000,1500,2000,2500';
const HOSTILE_IMG = '<img src=x onerror=alert(1)>';
const HOSTILE_SCRIPT = '<script>alert("orderId")</script>';

interface Tx {
  id: string;
  type: string;
  status: string;
  amount: string;
  currency: string;
  orderId: string;
  createdAt: string;
}

let stack: Stack;
let browser: Browser;
let receiver: CallbackReceiver;
let m1: Merchant;
let m2: Merchant;
/** m1's transactions, oldest first, as the API last returned them. */
let mine: Tx[] = [];
let theirs: Tx;
let featured: Tx;
/** A whole second: the hostile transactions were created before it, all others of m1 after it. */
let boundary: Date;
/** Every page's console problems, so the last test can check that none was a CSP violation. */
const logs: PageLog[] = [];

const operator = async (id: string, status: string) => {
  const res = await fetch(`${stack.transactions}/internal/transactions/${id}/status`, {
    method: 'POST',
    headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
  if (res.status !== 200) throw new Error(`operator ${status}: ${res.status} ${await res.text()}`);
};

/** An operator's money command (npm run merchant:…), failing the test when it fails. */
function operatorCli(args: string[]) {
  const res = stack.cli(['dist/cli/merchant.js', ...args]);
  if (res.status !== 0) throw new Error(`merchant ${args[0]} failed: ${res.stderr}`);
  return JSON.parse(res.stdout);
}

async function create(m: Merchant, kind: 'deposit' | 'withdraw', body: Record<string, unknown>, moves: string[] = []): Promise<Tx> {
  const payload = kind === 'withdraw' ? { destination: 'IBAN DE89 3704 0044 0532 0130 00', ...body } : body;
  const res = await api(stack, m.apiToken)('POST', kind === 'deposit' ? '/api/createDeposit' : '/api/createWithdraw', payload);
  if (res.status !== 201) throw new Error(`create ${kind}: ${res.status} ${res.text}`);
  for (const status of moves) await operator(res.json.id, status);
  return res.json as Tx;
}

/** Varied ordinary transactions, so the list shows every type, status and a few currencies. */
const ORDINARY: [kind: 'deposit' | 'withdraw', amount: string, currency: string, moves: string[]][] = [
  ['deposit', '100.50', 'USD', ['completed']],
  ['withdraw', '25.00', 'EUR', ['processing', 'completed']],
  ['deposit', '0.00012345', 'BTC', []],
  ['withdraw', '999999999999999999.99999999', 'USDT', ['failed']],
  ['deposit', '42', 'USD', ['processing']],
  ['withdraw', '310.10', 'USD', ['completed']],
  ['deposit', '7.77', 'EUR', ['failed']],
  ['deposit', '1500.00', 'USDT', ['completed']],
  ['withdraw', '60.66', 'GBP', []],
  ['deposit', '19.99', 'USD', ['processing', 'completed']],
  ['withdraw', '5000', 'EUR', ['processing']],
  ['deposit', '12.30', 'USD', []],
];

async function seed() {
  mine.push(await create(m1, 'withdraw', { amount: '1.00', currency: 'USD', orderId: HOSTILE_IMG, metadata: { note: HOSTILE_SCRIPT } }));
  mine.push(await create(m1, 'deposit', { amount: '2.00', currency: 'USD', orderId: HOSTILE_SCRIPT }));
  boundary = new Date(Math.ceil((Date.now() + 1) / 1000) * 1000);
  await new Promise((r) => setTimeout(r, boundary.getTime() - Date.now() + 20));
  for (const [i, [kind, amount, currency, moves]] of ORDINARY.entries()) {
    mine.push(await create(m1, kind, { amount, currency, orderId: `ORD-${1001 + i}` }, moves));
  }
  featured = await create(
    m1,
    'deposit',
    { amount: '250.00', currency: 'USD', orderId: 'ORD-2001', description: 'Top-up from card •••• 4242', metadata: { customerId: 'cus_8231', plan: 'pro' } },
    ['processing', 'completed'],
  );
  mine.push(featured);
  theirs = await create(m2, 'deposit', { amount: '3.00', currency: 'USD', orderId: 'OTHER-MERCHANT-ORDER' });
  // The list shows current statuses: read them back once the moves are done.
  const page = await api(stack, m1.apiToken)('GET', '/ui/viewTransaction?limit=100', undefined, { accept: 'application/json' });
  const byId = new Map((page.json.items as Tx[]).map((t) => [t.id, t]));
  mine = mine.map((t) => byId.get(t.id)!);
}

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  // The featured transaction's callbacks fail once (500) and then succeed; all others succeed at once.
  const seen = new Set<string>();
  receiver.respond = (req) => {
    if (req.json?.data?.orderId !== 'ORD-2001') return 200;
    const first = !seen.has(req.json.id);
    seen.add(req.json.id);
    return first ? 500 : 200;
  };
  stack = await startStack('ui_browser', { CALLBACK_RETRY_DELAYS_MS: RETRY_DELAYS_MS, RATE_LIMIT_PER_SECOND: '1000' });
  // m1's withdraws are created before any deposit of theirs settles: a credit limit lets them be paid.
  m1 = stack.createMerchant('Acme Ltd', '10000');
  m2 = stack.createMerchant('Other merchant', '0');
  operatorCli(['set-credit-limit', '--merchant', m1.merchantId, '--limit', '999999999999999999.99999999', '--currency', 'USDT']);
  await api(stack, m1.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/deposits` });
  browser = await launchChromium();
  await seed();
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await receiver?.close();
});

// ---- helpers ----------------------------------------------------------------------------------

async function newPage(options: Parameters<typeof openPage>[1] = {}) {
  const opened = await openPage(browser, { timezoneId: 'UTC', locale: 'en-GB', ...options });
  logs.push(opened.log);
  return opened;
}

async function listSettled(page: Page) {
  await page.waitForFunction(() => {
    const table = document.getElementById('list-table')!;
    return !table.hasAttribute('aria-busy') && (table.querySelector('table, .empty') || document.querySelector('#list-status.error'));
  });
}

async function signIn(page: Page, token: string) {
  await page.goto(`${stack.gateway}/ui`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Show transactions' }).click();
}

/** A new page signed in as `token`, its list loaded. */
async function listFor(token: string, options: Parameters<typeof openPage>[1] = {}) {
  const opened = await newPage(options);
  await signIn(opened.page, token);
  await listSettled(opened.page);
  return opened;
}

interface Row {
  created: string;
  type: string;
  status: string;
  amount: string;
  orderId: string;
}

function rows(page: Page): Promise<Row[]> {
  return page.$$eval('table.transactions tbody tr', (trs) =>
    trs.map((tr) => {
      const cell = (label: string) => tr.querySelector(`td[data-label="${label}"]`)!;
      return {
        created: cell('Created').querySelector('time')!.getAttribute('datetime')!,
        type: cell('Type').textContent!,
        status: cell('Status').textContent!,
        amount: cell('Amount').textContent!,
        orderId: cell('Order ID').textContent!,
      };
    }),
  );
}

/** "1234567.5" → "1,234,567.5": the grouping the page must show, computed here on the string. */
function grouped(amount: string): string {
  const [int, frac] = amount.split('.');
  const groups: string[] = [];
  for (let end = int!.length; end > 0; end -= 3) groups.unshift(int!.slice(Math.max(0, end - 3), end));
  return groups.join(',') + (frac === undefined ? '' : `.${frac}`);
}

/** The page's scripts, by path: htmx and app.js, nothing injected. */
const scripts = (page: Page) => page.$$eval('script', (els) => els.map((el) => new URL((el as HTMLScriptElement).src || 'inline:x').pathname));

const newestFirst = (txs: Tx[]) => [...txs].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
const orderIds = (txs: { orderId: string }[]) => txs.map((t) => t.orderId);

async function applyFilters(page: Page, fill: () => Promise<void>) {
  await fill();
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await listSettled(page);
}

// ---- tests ------------------------------------------------------------------------------------

describe('GET /ui: signing in with the API token', () => {
  it('says the token is wrong when it is, and keeps nothing', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'dwk_not_a_real_token');
    await expectAlert(page, /token is wrong/i);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await expect(page.getByLabel('API token').isVisible()).resolves.toBe(true);
    await context.close();
  });

  it("lists the merchant's own transactions newest first, none of another merchant's", async () => {
    const { context, page } = await listFor(m1.apiToken);
    // Signed in, the focus is on the list's heading, not lost on the page's body.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('list-title');
    const shown = await rows(page);
    expect(orderIds(shown)).toEqual(orderIds(newestFirst(mine)));
    expect(orderIds(shown)).not.toContain(theirs.orderId);
    for (const [i, tx] of newestFirst(mine).entries()) {
      expect(shown[i]).toEqual({ created: tx.createdAt, type: tx.type, status: tx.status, amount: `${grouped(tx.amount)} ${tx.currency}`, orderId: tx.orderId });
    }
    // Amounts exactly as stored, digits grouped: 26 significant digits survive, no float rounding.
    expect(shown.map((r) => r.amount)).toContain('999,999,999,999,999,999.99999999 USDT');
    expect(shown.map((r) => r.amount)).toContain('1,500.00 USDT');
    // Each time is shown relative and absolute.
    const firstTime = await page.locator('table.transactions tbody tr time').first().innerText();
    expect(firstTime).toMatch(/ago|now/);
    expect(firstTime).toMatch(new Date(featured.createdAt).getUTCFullYear().toString());
    await context.close();
  });

  it('keeps the token in sessionStorage only: not in a URL, a cookie or a request other than its header', async () => {
    const { context, page } = await newPage();
    const urls: string[] = [];
    const headerCarriers: string[] = [];
    page.on('request', (req) => {
      urls.push(req.url());
      if (req.headers()['serviceapitoken'] === m1.apiToken) headerCarriers.push(new URL(req.url()).pathname);
    });
    await signIn(page, m1.apiToken);
    await listSettled(page);
    await page.getByRole('link', { name: featured.orderId }).click();
    await page.locator('#detail-body dl').waitFor();

    expect(await page.evaluate(() => sessionStorage.getItem('dw.serviceApiToken'))).toBe(m1.apiToken);
    expect(page.url()).not.toContain(m1.apiToken);
    expect(urls.some((u) => u.includes(m1.apiToken))).toBe(false);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await context.cookies()).toEqual([]);
    expect(await page.getByLabel('API token').inputValue()).toBe('');
    expect(headerCarriers.length).toBeGreaterThanOrEqual(2);
    // The page's merchant views (balances, transactions, endpoint health) are the only requests that carry it.
    expect(new Set(headerCarriers)).toEqual(new Set(['/ui/balances', '/ui/viewTransaction', '/ui/endpointHealth']));
    await context.close();
  });
});

async function expectAlert(page: Page, text: RegExp) {
  const alert = page.getByRole('alert');
  await alert.waitFor();
  expect(await alert.innerText()).toMatch(text);
}

describe('GET /ui: filters and pages', () => {
  it('filters by type and status, then by orderId', async () => {
    const { context, page } = await listFor(m1.apiToken);

    await applyFilters(page, async () => {
      await page.getByLabel('Type').selectOption('withdraw');
      await page.getByLabel('Status').selectOption('completed');
    });
    const expected = newestFirst(mine.filter((t) => t.type === 'withdraw' && t.status === 'completed'));
    expect(expected.length).toBeGreaterThanOrEqual(2);
    expect(orderIds(await rows(page))).toEqual(orderIds(expected));

    await applyFilters(page, async () => {
      await page.getByLabel('Type').selectOption('');
      await page.getByLabel('Status').selectOption('');
      await page.getByLabel('Order ID').fill('ORD-1004');
    });
    expect(orderIds(await rows(page))).toEqual(['ORD-1004']);

    await applyFilters(page, () => page.getByLabel('Order ID').fill('no-such-order'));
    expect(await page.locator('#list-table .empty').innerText()).toMatch(/No transactions match these filters/);
    await context.close();
  });

  it('filters by a created-at range: from inclusive, before exclusive', async () => {
    const { context, page } = await listFor(m1.apiToken);
    // datetime-local is the browser's local time; the context runs in UTC.
    const local = boundary.toISOString().slice(0, 19);
    const before = mine.filter((t) => t.createdAt < boundary.toISOString());
    const after = mine.filter((t) => t.createdAt >= boundary.toISOString());
    expect(before).toHaveLength(2);

    await applyFilters(page, () => page.getByLabel('Created from').fill(local));
    expect(orderIds(await rows(page))).toEqual(orderIds(newestFirst(after)));
    await applyFilters(page, async () => {
      await page.getByLabel('Created from').fill('');
      await page.getByLabel('Created before').fill(local);
    });
    expect(orderIds(await rows(page))).toEqual(orderIds(newestFirst(before)));
    await context.close();
  });

  it('pages with Next and Previous through the cursor', async () => {
    const { context, page } = await listFor(m1.apiToken);
    await applyFilters(page, () => page.getByLabel('Per page').selectOption('10').then(() => undefined));
    const all = orderIds(newestFirst(mine));
    expect(all.length).toBeGreaterThan(10);

    const first = orderIds(await rows(page));
    expect(first).toEqual(all.slice(0, 10));
    expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
    await saveScreenshot(page, 'list.png');

    await page.getByRole('button', { name: 'Next page' }).focus();
    await page.keyboard.press('Enter');
    await listSettled(page);
    expect(orderIds(await rows(page))).toEqual(all.slice(10));
    expect(await page.locator('#page-no').innerText()).toBe('Page 2');
    // The focus is on the new page (the pager it was on was replaced), and a screen reader hears it.
    await page.waitForFunction(() => document.activeElement?.id === 'list-table', null, { timeout: 3_000 });
    expect(await page.locator('#list-announce').textContent()).toBe(`${all.length - 10} transaction${all.length - 10 === 1 ? '' : 's'} shown.`);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Previous page' }).click();
    await listSettled(page);
    expect(orderIds(await rows(page))).toEqual(first);
    expect(await page.locator('#page-no').innerText()).toBe('Page 1');
    await context.close();
  });

  it('fits a phone-sized screen without sideways scrolling', async () => {
    const { context, page } = await newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await signIn(page, m1.apiToken);
    await listSettled(page);
    // The filters start folded, so the transactions follow the balances at once; one tap opens them.
    expect(await page.getByLabel('Type').isVisible()).toBe(false);
    expect(await page.locator('table.transactions tbody tr').first().isVisible()).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.locator('#list-title').evaluate((el) => el.scrollIntoView());
    await saveScreenshot(page, 'list-mobile.png', false);
    await page.getByText('Filters', { exact: true }).click();
    await applyFilters(page, () => page.getByLabel('Type').selectOption('deposit').then(() => undefined));
    expect(await page.locator('#filter-count').textContent()).toBe('(1 active)');
    expect(new Set((await rows(page)).map((r) => r.type))).toEqual(new Set(['deposit']));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByRole('link', { name: featured.orderId }).click();
    await page.locator('#detail-body dl').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await context.close();
  });
});

describe('GET /ui: Download CSV', () => {
  it('downloads every transaction matching the applied filters, as the API exports them', async () => {
    const { context, page } = await newPage({ acceptDownloads: true });
    await signIn(page, m1.apiToken);
    await listSettled(page);
    await applyFilters(page, async () => {
      await page.getByLabel('Per page').selectOption('10');
      await page.getByLabel('Type').selectOption('deposit');
    });
    // Typed but not applied: the file holds what the list shows.
    await page.getByLabel('Order ID').fill('not-applied');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('transactions.csv');
    const text = readFileSync(await download.path(), 'utf8');
    const expected = await api(stack, m1.apiToken)('GET', '/ui/viewTransaction?type=deposit', undefined, { accept: 'text/csv' });
    expect(text).toBe(expected.text);
    const lines = text.trim().split('\r\n');
    expect(lines.length - 1).toBe(mine.filter((t) => t.type === 'deposit').length); // all of them, not one page of 10
    await context.close();
  });
});

describe('GET /ui: callback endpoint health', () => {
  it('shows, per callback URL, what /ui/endpointHealth reports: deliveries, success rate, retrying, failed, last success and failure', async () => {
    const { context, page } = await listFor(m1.apiToken);
    const deposit = page.locator('#health-body [data-type="deposit"]');
    await deposit.waitFor();
    const health = (await api(stack, m1.apiToken)('GET', '/ui/endpointHealth', undefined, { accept: 'application/json' })).json;
    const expected = health.endpoints[0];
    const field = (name: string) => deposit.locator(`[data-field="${name}"]`).innerText();
    expect(await deposit.locator('code').innerText()).toBe(`${receiver.url}/deposits`);
    // m1's events were all created by the seed, so the count is settled; every deposit event has a delivery.
    expect(expected.deliveries).toBeGreaterThan(mine.filter((t) => t.type === 'deposit').length); // moves add events
    expect(await field('deliveries')).toBe(String(expected.deliveries));
    expect(await field('failed')).toBe('0');
    expect(await field('successRate')).toMatch(/^100\.0 %$|^n\/a$/); // nothing failed: 100 % of what finished
    expect(await field('lastSuccess')).toMatch(/ago|now/);
    // The featured transaction's first attempts were answered 500.
    expect(await field('lastFailure')).toContain('HTTP 500');
    const withdraw = page.locator('#health-body [data-type="withdraw"]');
    expect(await withdraw.innerText()).toContain('No URL set');
    await context.close();
  });
});

describe('GET /ui: hostile data', () => {
  it('shows a hostile orderId and metadata value as text and runs nothing', async () => {
    const { context, page, log } = await newPage();
    await signIn(page, m1.apiToken);
    await listSettled(page);
    const shown = orderIds(await rows(page));
    expect(shown).toContain(HOSTILE_IMG);
    expect(shown).toContain(HOSTILE_SCRIPT);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await scripts(page)).toEqual(['/ui/assets/htmx.min.js', '/ui/assets/app.js']);

    await page.getByRole('link', { name: HOSTILE_IMG }).click();
    await page.locator('#detail-body dl').waitFor();
    expect(await page.locator('#detail-title').textContent()).toBe(`Transaction ${HOSTILE_IMG}`);
    expect(await page.locator('table.metadata td[data-label="Value"]').textContent()).toBe(HOSTILE_SCRIPT);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await scripts(page)).toEqual(['/ui/assets/htmx.min.js', '/ui/assets/app.js']);
    await page.waitForTimeout(200); // an onerror handler would have fired by now
    expect(log.dialogs).toEqual([]);
    await context.close();
  });
});

describe('GET /ui: one transaction', () => {
  /** Waits (through the JSON API) until every event of the transaction has settled its delivery. */
  async function deliveriesSettled(id: string) {
    const deadline = Date.now() + 30_000;
    let detail: any;
    while (Date.now() < deadline) {
      detail = (await api(stack, m1.apiToken)('GET', `/ui/viewTransaction?id=${id}`, undefined, { accept: 'application/json' })).json;
      if (detail.events.length === 3 && detail.events.every((e: any) => e.delivery.status === 'succeeded')) return detail;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`callbacks not delivered in 30 s: ${JSON.stringify(detail.events)}; receiver got ${receiver.received.length} requests`);
  }

  it('shows every field, the metadata, the trace id, and each event with its delivery and every attempt', async () => {
    const detail = await deliveriesSettled(featured.id);
    const { context, page } = await listFor(m1.apiToken);
    await page.getByRole('link', { name: featured.orderId }).click();
    await page.locator('#detail-body .timeline').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('detail-title');

    const fields = await page.$$eval('#detail-body dl.fields dt', (dts) =>
      Object.fromEntries(dts.map((dt) => [dt.textContent, (dt.nextElementSibling as HTMLElement).innerText])),
    );
    expect(fields).toMatchObject({
      ID: featured.id,
      Type: 'deposit',
      Status: 'completed',
      Amount: '250.00 USD',
      'Order ID': 'ORD-2001',
      Description: 'Top-up from card •••• 4242',
      Destination: 'none',
    });
    expect(fields['Trace ID']).toContain(detail.traceId);
    expect(detail.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(await page.locator('table.metadata tbody tr').allInnerTexts()).toEqual(['customerId\tcus_8231', 'plan\tpro']);

    const events = page.locator('#detail-body .timeline > li');
    expect(await events.locator('h3').allTextContents()).toEqual(['deposit.pending', 'deposit.processing', 'deposit.completed']);
    for (let i = 0; i < 3; i++) {
      const event = events.nth(i);
      expect(await event.locator('.badge').textContent()).toBe('succeeded');
      const attempts = await event.locator('table.attempts tbody tr').evaluateAll((trs) =>
        trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.innerText.replace(/\s+/g, ' ').trim())),
      );
      expect(attempts).toHaveLength(2);
      // Each result says where the attempt went: the callback URL as it was set then.
      expect(attempts[0]).toEqual(['1', expect.stringMatching(/ago|now/), `HTTP 500 to ${receiver.url}/deposits`, expect.stringMatching(/^\d+ ms$/)]);
      expect(attempts[1]).toEqual(['2', expect.stringMatching(/ago|now/), `HTTP 200 to ${receiver.url}/deposits`, expect.stringMatching(/^\d+ ms$/)]);
    }
    await saveScreenshot(page, 'detail.png');
    // Back on the list, the focus is on the transaction's link again, not lost on the page.
    await page.locator('#back').click();
    await page.waitForFunction(() => !document.getElementById('list-view')!.hidden);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(featured.orderId);
    // The skip link, the page's first stop for the keyboard, takes it past the header, balances and filters.
    const firstStop = await page.evaluate(() => document.querySelector('a[href], button:not([hidden]), input, select, summary, [tabindex="0"]')?.id);
    expect(firstStop).toBe('skip');
    await page.locator('#skip').focus();
    expect(await page.locator('#skip').evaluate((el) => el.getBoundingClientRect().top >= 0)).toBe(true); // shown while focused
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('list-table');
    await context.close();
  });
});

describe('GET /ui: a transaction opened in a new tab', () => {
  it("links each transaction at /ui's own address: a new tab asks for the token, then shows that transaction", async () => {
    const { context, page } = await listFor(m1.apiToken);
    const link = page.getByRole('link', { name: featured.orderId });
    expect(await link.getAttribute('href')).toBe(`/ui#tx=${featured.id}`);
    // A Ctrl-click is the browser's to handle (a new tab), not the page's: this tab stays on the list.
    await link.click({ modifiers: ['Control'] });
    await new Promise((r) => setTimeout(r, 300));
    expect(new URL(page.url()).hash).not.toContain('tx=');
    // The new tab holds no token (sessionStorage is per tab): it asks, then opens the transaction.
    const tab = await context.newPage();
    await tab.goto(`${stack.gateway}/ui#tx=${featured.id}`);
    await tab.getByLabel('API token').fill(m1.apiToken);
    await tab.getByRole('button', { name: 'Show transactions' }).click();
    await tab.locator('#detail-body dl.fields').waitFor();
    expect(await tab.locator('#detail-title').textContent()).toContain(featured.orderId);
    await context.close();
  });
});

describe('GET /ui: following a transaction as it moves', () => {
  it('refreshes an open pending transaction by itself until it is final', async () => {
    // Another merchant, so the lists the other tests compare stay as seeded.
    const tx = await create(m2, 'deposit', { amount: '9.99', currency: 'USD', orderId: `LIVE-${Date.now()}` });
    const { context, page } = await newPage();
    await signIn(page, m2.apiToken);
    await listSettled(page);
    await page.getByRole('link', { name: tx.orderId }).click();
    const status = page.locator('#detail-body dl.fields .badge').first();
    await status.waitFor();
    expect(await status.textContent()).toBe('pending');
    expect(await page.locator('#detail-live').isVisible()).toBe(true);

    await operator(tx.id, 'completed');
    await page.waitForFunction(
      () => document.querySelector('#detail-body dl.fields .badge')?.textContent === 'completed',
      undefined,
      { timeout: 10_000 },
    );
    // No callback URL: both deliveries are skipped, nothing is moving, so the refreshing stops.
    await page.locator('#detail-live').waitFor({ state: 'hidden', timeout: 10_000 });
    expect(await page.locator('.timeline h3').allTextContents()).toEqual(['deposit.pending', 'deposit.completed']);
    expect(await page.locator('.timeline .badge').allTextContents()).toEqual(['skipped', 'skipped']);
    await context.close();
  });
});

describe('GET /ui: signing out', () => {
  it('Sign out clears sessionStorage and returns to the token form, also after a reload', async () => {
    const { context, page } = await listFor(m1.apiToken);
    await page.getByRole('link', { name: featured.orderId }).click();
    await page.locator('#detail-body dl').waitFor();
    await page.evaluate(() => {
      (document.getElementById('f-order') as HTMLInputElement).value = 'typed-by-the-first';
      (document.getElementById('s-currency') as HTMLInputElement).value = 'EUR';
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.getByLabel('API token').isVisible()).toBe(true);
    expect(await page.locator('table.transactions').count()).toBe(0);
    // Nothing of this merchant stays in the page for whoever signs in next on this tab.
    const html = await page.content();
    expect(html).not.toContain(featured.orderId);
    expect(html).not.toContain('typed-by-the-first');
    expect(await page.locator('#s-currency').inputValue()).toBe('');
    expect(await page.locator('#detail-title').textContent()).toBe('Transaction');
    await page.reload();
    expect(await page.getByLabel('API token').isVisible()).toBe(true);
    await context.close();
  });
});

describe('GET /ui/viewTransaction with Accept: text/html, JavaScript off', () => {
  async function htmlPage() {
    const opened = await newPage({ javaScriptEnabled: false });
    await opened.context.setExtraHTTPHeaders({ serviceApiToken: m1.apiToken, accept: 'text/html' });
    return opened;
  }

  it('renders the list server-side, hostile orderIds as text', async () => {
    const { context, page } = await htmlPage();
    const res = await page.goto(`${stack.gateway}/ui/viewTransaction`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()['content-type']).toMatch(/^text\/html/);
    expect(await page.locator('h1').textContent()).toBe('Transactions');
    const cells = await page.locator('td[data-label="Order ID"]').allTextContents();
    expect(cells).toEqual(orderIds(newestFirst(mine)));
    expect(await page.locator('main img, script').count()).toBe(0);
    await context.close();
  });

  it('renders one transaction with its events and attempts, and pages through the list', async () => {
    const { context, page } = await htmlPage();
    await page.goto(`${stack.gateway}/ui/viewTransaction?id=${featured.id}`);
    expect(await page.locator('h1').textContent()).toBe('Transaction');
    expect(await page.locator('main').innerText()).toContain('ORD-2001');
    expect(await page.locator('.timeline h3').allTextContents()).toEqual(['deposit.pending', 'deposit.processing', 'deposit.completed']);
    expect(await page.locator('.timeline table.attempts tbody tr').count()).toBeGreaterThanOrEqual(3);

    await page.goto(`${stack.gateway}/ui/viewTransaction?limit=10`);
    await page.getByRole('link', { name: 'Next page' }).click();
    expect(await page.locator('td[data-label="Order ID"]').allTextContents()).toEqual(orderIds(newestFirst(mine)).slice(10));
    await context.close();
  });

  it('answers a wrong token with 401 and a body that says so', async () => {
    // The gateway refuses the token before the ui is reached, so this is its problem body.
    const { context, page } = await newPage({ javaScriptEnabled: false });
    await context.setExtraHTTPHeaders({ serviceApiToken: 'dwk_wrong', accept: 'text/html' });
    const res = await page.goto(`${stack.gateway}/ui/viewTransaction`);
    expect(res!.status()).toBe(401);
    expect(await page.locator('body').innerText()).toMatch(/unauthori[sz]ed/i);
    await context.close();
  });
});

describe('GET /ui: what the page says when something is off', () => {
  it('a #tx= link with broken escapes says the link is invalid, replacing what was shown, and throws nothing', async () => {
    const { context, page, log } = await newPage();
    await signIn(page, m1.apiToken);
    await listSettled(page);
    await page.getByRole('link', { name: featured.orderId }).click();
    await page.locator('#detail-body dl').waitFor();

    await page.evaluate(() => (location.hash = '#tx=%E0%A4%A'));
    await page.locator('#detail-status.error').waitFor();
    expect(await page.locator('#detail-status').innerText()).toMatch(/link is invalid/i);
    expect(await page.locator('#detail-body').innerHTML()).toBe('');
    expect(await page.locator('#detail-title').textContent()).toBe('Transaction');

    // Well-formed escapes, but no transaction id: the same words, not the API's "query parameter id".
    for (const hash of ['#list', '#tx=does-not-exist', '#tx=%3Cb%3E']) {
      await page.evaluate((h) => (location.hash = h), hash);
      if (hash === '#list') continue;
      await page.locator('#detail-status.error').waitFor();
      expect(await page.locator('#detail-status').innerText()).toMatch(/^This link is invalid/);
    }
    expect(log.problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
    await context.close();
  });

  it('a pasted token that is not visible ASCII is the wrong token, sent nowhere and not kept', async () => {
    const { context, page } = await newPage();
    const sent: string[] = [];
    page.on('request', (req) => {
      if (req.url().includes('/ui/viewTransaction') || req.url().includes('/ui/endpointHealth')) sent.push(req.url());
    });
    await signIn(page, 'dwk_é😀');
    await expectAlert(page, /token is wrong/i);
    expect(await page.locator('#signin-error').innerText()).not.toMatch(/reach the server/i);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(sent).toEqual([]);
    await context.close();
  });

  it('asks for no /favicon.ico and logs no error, on the interactive page and a no-script page', async () => {
    const interactive = await newPage();
    const noScript = await newPage({ javaScriptEnabled: false });
    await noScript.context.setExtraHTTPHeaders({ serviceApiToken: m1.apiToken, accept: 'text/html' });
    const asked: string[] = [];
    for (const { page } of [interactive, noScript]) page.on('request', (req) => asked.push(new URL(req.url()).pathname));

    await signIn(interactive.page, m1.apiToken);
    await listSettled(interactive.page);
    await noScript.page.goto(`${stack.gateway}/ui/viewTransaction`);
    await interactive.page.waitForTimeout(500); // a favicon request follows the load
    expect(asked).not.toContain('/favicon.ico');
    expect([...interactive.log.problems, ...noScript.log.problems]).toEqual([]);
    // Headless Chromium skips favicons; a headed browser asks unless a page names its icon itself.
    for (const { page } of [interactive, noScript]) expect(await page.locator('head link[rel="icon"]').getAttribute('href')).toBe('data:,');
    await interactive.context.close();
    await noScript.context.close();
  });

  it('a filter the API refuses (400) says which field and why', async () => {
    const { context, page } = await listFor(m1.apiToken);
    // 129 characters: more than an orderId holds (the field's maxlength stops typing, not a script).
    await applyFilters(page, () => page.evaluate(() => void ((document.getElementById('f-order') as HTMLInputElement).value = 'x'.repeat(129))));
    const status = await page.locator('#list-status.error').innerText();
    expect(status).toMatch(/orderId: must [^.]*128 characters/);
    // Said once: the problem's detail already names the field, so the list of fields does not repeat it.
    expect(status.match(/128 characters/g)).toHaveLength(1);
    // With the request ID, to quote to support.
    expect(status).toMatch(/\(HTTP 400, request ID [0-9a-f-]{36}\)/);
    // The rows shown before belonged to the filter before: they are not left under the error.
    expect(await page.locator('#list-table tbody tr').count()).toBe(0);
    await context.close();
  });

  it('reads an order ID without the spaces around it, and a statement currency in capitals', async () => {
    const { context, page } = await listFor(m1.apiToken);
    await applyFilters(page, () => page.getByLabel('Order ID').fill(`  ${featured.orderId} `));
    expect(await page.locator('td[data-label="Order ID"]').allTextContents()).toEqual([featured.orderId]);
    await page.evaluate(() => (location.hash = '#statement'));
    await page.getByLabel('Currency').fill('usd');
    await page.getByLabel('Currency').blur();
    expect(await page.getByLabel('Currency').inputValue()).toBe('USD');
    await context.close();
  });
});

describe('GET /ui: balances, ledger entries and the statement', () => {
  let m3: Merchant;
  let withdraw: Tx;

  /** A signed change as the page shows it: "+1,000.50", "-20", "0" for a part that did not move. */
  /**
   * A balance's parts (and the balance after a ledger entry) are shown to one count of fraction
   * digits, the most among them, zeros padded: "0" beside "5.00" reads 0.00.
   */
  const digits = (...amounts: string[]) => Math.max(...amounts.map((a) => a.split('.')[1]?.length ?? 0));
  const padded = (amount: string, d: number) => {
    const [int, frac = ''] = amount.split('.');
    return grouped(d === 0 ? int! : `${int}.${frac.padEnd(d, '0')}`);
  };
  const signed = (amount: string) => (/^-?0+(\.0+)?$/.test(amount) ? '0' : amount.startsWith('-') ? `-${grouped(amount.slice(1))}` : `+${grouped(amount)}`);

  beforeAll(async () => {
    // A merchant of its own, so the other tests' lists stay as seeded: a settled deposit, a pending
    // one in another currency, a withdraw held, and an operator's correction.
    m3 = stack.createMerchant('Ledger Ltd', '0');
    await create(m3, 'deposit', { amount: '1234567.891', currency: 'USD', orderId: 'LEDGER-DEP-1' }, ['completed']);
    await create(m3, 'deposit', { amount: '0.00012345', currency: 'BTC', orderId: 'LEDGER-DEP-2' });
    withdraw = await create(m3, 'withdraw', { amount: '1000.50', currency: 'USD', orderId: 'LEDGER-WD-1' });
    operatorCli(['adjust-balance', '--merchant', m3.merchantId, '--currency', 'USD', '--amount=-0.391', '--reason', 'Bank fee, March', '--reference', 'adj-ui-1']);
  });

  async function ledgerSettled(page: Page, container: string) {
    await page.waitForFunction((id) => {
      const box = document.getElementById(id)!;
      return !box.hasAttribute('aria-busy') && box.querySelector('table, .empty');
    }, container);
  }

  /** Each row of a ledger table: its kind, and each part's change and balance after it, as shown. */
  function ledgerRows(page: Page, table: string) {
    return page.$$eval(`${table} tbody tr`, (trs) =>
      trs.map((tr) => {
        const part = (name: string) => {
          const td = tr.querySelector(`td[data-part="${name}"]`)!;
          return [td.querySelector('[data-field="change"]')!.textContent, td.querySelector('[data-field="after"]')!.textContent];
        };
        return { kind: tr.querySelector('[data-field="kind"]')!.textContent, available: part('available'), held: part('held'), incoming: part('incoming') };
      }),
    );
  }

  const expectedRows = (entries: any[]) =>
    entries.map((e) => ({
      kind: e.kind,
      available: [signed(e.change.available), padded(e.available, digits(e.available, e.held, e.incoming))],
      held: [signed(e.change.held), padded(e.held, digits(e.available, e.held, e.incoming))],
      incoming: [signed(e.change.incoming), padded(e.incoming, digits(e.available, e.held, e.incoming))],
    }));

  it('shows the balance of each currency above the transactions, exact and with grouped digits', async () => {
    const { context, page } = await newPage();
    await signIn(page, m3.apiToken);
    await listSettled(page);
    await page.locator('#balances-body [data-fragment="balances"]').waitFor();
    const api = (await api3('/api/getBalance')).json.balances as any[];
    expect(api.map((b) => b.currency)).toEqual(['BTC', 'USD']);
    for (const b of api) {
      const card = page.locator(`#balances-body [data-currency="${b.currency}"]`);
      const field = (name: string) => card.locator(`[data-field="${name}"]`).innerText();
      const d = digits(b.available, b.held, b.incoming, b.creditLimit);
      expect(await field('available')).toBe(`${padded(b.available, d)} ${b.currency}`);
      expect(await field('held')).toBe(`${padded(b.held, d)} ${b.currency}`);
      expect(await field('incoming')).toBe(`${padded(b.incoming, d)} ${b.currency}`);
      expect(await field('creditLimit')).toBe(`${padded(b.creditLimit, d)} ${b.currency}`);
    }
    // 1,234,567.891 in, 1,000.50 held, 0.391 corrected: every digit kept, none rounded through a float.
    const usd = page.locator('#balances-body [data-currency="USD"]');
    expect(await usd.locator('[data-field="available"]').innerText()).toMatch(/^1,233,567\.0+ USD$/);
    expect(await usd.locator('[data-field="held"]').innerText()).toMatch(/^1,000\.50* USD$/);
    expect(await page.locator('#balances-body [data-currency="BTC"] [data-field="incoming"]').innerText()).toBe('0.00012345 BTC');
    expect(await page.locator('#balances-body [data-currency="BTC"] [data-field="available"]').innerText()).toBe('0.00000000 BTC');
    await context.close();
  });

  it("shows a transaction's ledger entries in its detail, in order", async () => {
    const { context, page } = await newPage();
    await signIn(page, m3.apiToken);
    await listSettled(page);
    await page.getByRole('link', { name: 'LEDGER-WD-1' }).click();
    await page.locator('#detail-body table.ledger').waitFor();
    const detail = (await api3(`/ui/viewTransaction?id=${withdraw.id}`)).json;
    expect(detail.ledgerEntries.map((e: any) => e.kind)).toEqual(['withdraw.hold']);
    expect(await ledgerRows(page, '#detail-body table.ledger')).toEqual(expectedRows(detail.ledgerEntries));
    expect((await ledgerRows(page, '#detail-body table.ledger'))[0]!.held[0]).toMatch(/^\+1,000\.50*$/);
    await context.close();
  });

  it('keeps the statement\'s address, heading and tab title on the currency shown: #statement=usd opens USD, a filter applied moves the address', async () => {
    const { context, page } = await listFor(m3.apiToken);
    await page.evaluate(() => (location.hash = '#statement=usd'));
    await ledgerSettled(page, 'statement-table');
    expect(await page.getByLabel('Currency').inputValue()).toBe('USD');
    await page.waitForFunction(() => location.hash === '#statement=USD');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('statement-title');
    expect([await page.locator('#statement-title').innerText(), await page.title()]).toEqual(['Statement · USD', 'Statement · USD · Deposit & Withdraw']);
    expect(await page.locator('#statement-announce').innerText()).toMatch(/^\d+ (entry|entries) shown\.$/);

    await page.getByLabel('Currency').fill('btc');
    await page.getByRole('button', { name: 'Show entries' }).click();
    await page.waitForFunction(() => location.hash === '#statement=BTC');
    await ledgerSettled(page, 'statement-table');
    expect((await ledgerRows(page, '#statement-table table.ledger')).map((r) => r.kind)).toEqual(['deposit.pending']);
    // A reload shows what the address names.
    await page.reload();
    await ledgerSettled(page, 'statement-table');
    expect(await page.getByLabel('Currency').inputValue()).toBe('BTC');
    await context.close();
  });

  it('opens the statement of a currency from its balance, pages it, and downloads it as the API exports it', async () => {
    const { context, page } = await newPage({ acceptDownloads: true });
    await signIn(page, m3.apiToken);
    await listSettled(page);
    // Each balance's link has a name of its own for screen readers, not one more "Statement".
    await page.getByRole('link', { name: 'Statement of USD', exact: true }).click();
    await ledgerSettled(page, 'statement-table');
    expect(page.url()).toMatch(/#statement=USD$/);
    expect(await page.getByLabel('Currency').inputValue()).toBe('USD');

    const history = (await api3('/api/getBalanceHistory?currency=USD')).json;
    expect(history.items.map((e: any) => e.kind)).toEqual(['adjustment', 'withdraw.hold', 'deposit.completed', 'deposit.pending']);
    expect(await ledgerRows(page, '#statement-table table.ledger')).toEqual(expectedRows(history.items));
    expect(await page.locator('#statement-table tbody tr').first().innerText()).toContain('Bank fee, March');
    await saveScreenshot(page, 'statement.png');

    // Two to a page: Next and Previous walk the same entries. The page offers 10 to 100 a page; an
    // option of 2 (the API takes any limit of 1–100) keeps the seed small.
    await page.evaluate(() => {
      const select = document.getElementById('s-limit') as HTMLSelectElement;
      select.add(new Option('2'));
      select.value = '2';
    });
    await page.getByRole('button', { name: 'Show entries' }).click();
    await page.locator('#statement-page-no', { hasText: 'Page 1' }).waitFor();
    await ledgerSettled(page, 'statement-table');
    expect((await ledgerRows(page, '#statement-table table.ledger')).map((r) => r.kind)).toEqual(['adjustment', 'withdraw.hold']);
    await page.locator('#statement-next').click();
    await page.locator('#statement-page-no', { hasText: 'Page 2' }).waitFor();
    expect((await ledgerRows(page, '#statement-table table.ledger')).map((r) => r.kind)).toEqual(['deposit.completed', 'deposit.pending']);
    await page.locator('#statement-prev').click();
    await page.locator('#statement-page-no', { hasText: 'Page 1' }).waitFor();
    expect((await ledgerRows(page, '#statement-table table.ledger')).map((r) => r.kind)).toEqual(['adjustment', 'withdraw.hold']);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download statement CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('statement.csv');
    const text = readFileSync(await download.path(), 'utf8');
    const expected = await api(stack, m3.apiToken)('GET', '/api/getBalanceHistory?currency=USD', undefined, { accept: 'text/csv' });
    expect(expected.status).toBe(200);
    expect(text).toBe(expected.text);
    expect(text.trim().split('\r\n')).toHaveLength(1 + 4); // a header and every USD entry, not one page of 2
    await context.close();
  });

  const api3 = (path: string) => api(stack, m3.apiToken)('GET', path, undefined, { accept: 'application/json' });
});

describe('Content-Security-Policy', () => {
  it('a page that broke the policy would be caught: an injected inline script is refused and logged', async () => {
    const { context, page, log } = await newPage();
    await page.goto(`${stack.gateway}/ui`);
    await page.addScriptTag({ content: 'document.title = "inline ran"' }).catch(() => undefined);
    await page.waitForTimeout(100);
    expect(await page.title()).not.toBe('inline ran');
    expect(log.problems.some(isCspViolation)).toBe(true);
    logs.splice(logs.indexOf(log), 1); // the control's own violation is expected
    await context.close();
  });

  it('no page of this file logged a CSP violation or a script error', () => {
    expect(logs.length).toBeGreaterThan(10);
    const problems = logs.flatMap((l) => l.problems);
    expect(problems.filter(isCspViolation)).toEqual([]);
    expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
  });
});
