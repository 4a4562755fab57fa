/**
 * One transaction: every field, its metadata and the event timeline. `detailFragment` is the one
 * template: the no-script page wraps it in the layout, /ui's script fetches it alone and swaps it in.
 */
import type { BalanceEntry, TransactionDetail } from '@dw/contracts';
import type { Assets } from '../assets';
import { badge, isolate, isolatedText, money, timeCell, viewHref } from './format';
import { html, type SafeHtml } from './html';
import { layout } from './layout';
import { entriesTable } from './ledger-entries';

/** transactions-svc adds the transaction's ledger entries, in order, once the ledger is there. */
type DetailView = TransactionDetail & { ledgerEntries?: BalanceEntry[] };

type EventView = TransactionDetail['events'][number];
type Attempt = EventView['delivery']['attempts'][number];

const TRACE_HINT = html`<span class="muted hint">Give this to support: it finds the request in Jaeger.</span>`;
const orNone = (value: string | null): SafeHtml => (value === null ? html`<span class="muted">none</span>` : isolate(value));

function fields(detail: TransactionDetail, now: number): SafeHtml {
  const tx = detail.transaction;
  return html`<dl class="fields">
<dt>ID</dt><dd><code>${tx.id}</code></dd>
<dt>Type</dt><dd>${tx.type}</dd>
<dt>Status</dt><dd>${badge(tx.status)}</dd>
<dt>Amount</dt><dd>${money(tx.amount, tx.currency)}</dd>
<dt>Order ID</dt><dd class="wrap">${isolate(tx.orderId)}</dd>
<dt>Description</dt><dd class="wrap">${orNone(tx.description)}</dd>
<dt>Destination</dt><dd class="wrap">${orNone(tx.destination)}</dd>
<dt>Created</dt><dd>${timeCell(tx.createdAt, now)}</dd>
<dt>Updated</dt><dd>${timeCell(tx.updatedAt, now)}</dd>
<dt>Trace ID</dt><dd>${detail.traceId ? html`<code>${detail.traceId}</code> ${TRACE_HINT}` : orNone(null)}</dd>
</dl>`;
}

function metadata(meta: Record<string, string>): SafeHtml {
  // Key order carries no meaning (the contract compares metadata regardless of it): sorted.
  const entries = Object.entries(meta).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return html`<p class="muted">No metadata.</p>`;
  return html`<table class="metadata"><thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead><tbody>
${entries.map(([k, v]) => html`<tr><td data-label="Key" class="wrap">${isolate(k)}</td><td data-label="Value" class="wrap">${isolate(v)}</td></tr>`)}
</tbody></table>`;
}

function attemptRow(a: Attempt, now: number): SafeHtml {
  // A status with an error is a reply that failed all the same (a 200 whose body did not complete in time).
  const failedReply = a.error === null ? '' : html` <span class="error-text">${isolate(a.error)}</span>`;
  const result = a.statusCode !== null ? html`HTTP ${a.statusCode}${failedReply}` : html`<span class="error-text">${isolate(a.error ?? 'no reply')}</span>`;
  // A manual attempt belongs to a series the merchant started (redelivery or recovery).
  const manual = a.trigger === 'manual' ? html` <span class="tag" data-trigger="manual">manual</span>` : '';
  // Where it went: the URL as it was set at that moment (it may have changed between attempts).
  const sentTo = a.url === null ? '' : html`<div class="muted wrap attempt-url">to ${isolate(a.url)}</div>`;
  return html`<tr><td data-label="Attempt">${a.attempt}${manual}</td><td data-label="Time">${timeCell(a.at, now)}</td><td data-label="Result">${result}${sentTo}</td><td data-label="Duration" class="num">${a.durationMs} ms</td></tr>`;
}

const SETTLED_DELIVERY = new Set(['succeeded', 'failed', 'skipped']);

/**
 * "Redeliver" on an event whose delivery has settled (docs/api.md#redelivery-and-recovery: a series still pending or
 * retrying answers 409, so the button is not offered then). htmx posts it as JSON (the `json`
 * encoding in public/app.js) with the merchant's token; the script then says how it went and
 * reloads the transaction. The no-script page hides it (it needs the token header).
 */
function eventActions(e: EventView): SafeHtml | string {
  if (!SETTLED_DELIVERY.has(e.delivery.status)) return '';
  return html`<div class="event-actions needs-script">
<button type="button" class="secondary" data-action="redeliver" hx-post="/api/redeliverCallback" hx-vals="${JSON.stringify({ eventId: e.id })}" hx-ext="json" hx-swap="none" hx-sync="this:drop" hx-disabled-elt="this">Redeliver</button>
<span class="action-status" role="status" aria-live="polite"></span>
</div>`;
}

/** Attempts shown at once per event; the earlier ones open on demand. */
export const LATEST_ATTEMPTS = 5;

const attemptsTable = (rows: Attempt[], now: number): SafeHtml =>
  html`<table class="attempts"><thead><tr><th scope="col">Attempt</th><th scope="col">Time</th><th scope="col">Result</th><th scope="col" class="num">Duration</th></tr></thead>
<tbody>${rows.map((a) => attemptRow(a, now))}</tbody></table>`;

/**
 * An event's attempts, oldest first as the API gives them. An event holds up to 66 (6 automatic and
 * 10 manual series of 6: docs/api.md#redelivery-and-recovery), so only the latest
 * LATEST_ATTEMPTS show; the earlier ones sit above them in a closed <details> that opens in place,
 * without a request and without script, keeping the order 1, 2, … down the page.
 */
function attemptsOf(e: EventView, now: number): SafeHtml {
  const all = e.delivery.attempts;
  if (all.length === 0) {
    return html`<p class="muted">${e.delivery.status === 'skipped' ? 'Not sent: no callback URL was set.' : 'No delivery attempts yet.'}</p>`;
  }
  if (all.length <= LATEST_ATTEMPTS) return attemptsTable(all, now);
  const earlier = all.slice(0, all.length - LATEST_ATTEMPTS);
  return html`<details class="earlier-attempts" data-event="${e.id}"><summary>Show all ${all.length} attempts (${earlier.length} earlier)</summary>
${attemptsTable(earlier, now)}</details>
<p class="muted hint">Latest ${LATEST_ATTEMPTS} of ${all.length} attempts:</p>
${attemptsTable(all.slice(-LATEST_ATTEMPTS), now)}`;
}

function event(e: EventView, now: number): SafeHtml {
  const attempts = attemptsOf(e, now);
  return html`<li class="event" data-event="${e.id}" tabindex="-1">
<h3>${e.type}</h3>
<p>${timeCell(e.createdAt, now)}</p>
<p>Callback ${badge(e.delivery.status)}</p>
<p class="muted">Event <code>${e.id}</code></p>
${eventActions(e)}
${attempts}
</li>`;
}

const MOVING_DELIVERY = new Set(['pending', 'retrying']);

/** Money or a callback is still moving: /ui's script refreshes the open transaction while so. */
function stillMoving(detail: TransactionDetail): boolean {
  const { status } = detail.transaction;
  return (status !== 'completed' && status !== 'failed') || detail.events.some((e) => MOVING_DELIVERY.has(e.delivery.status));
}

export function detailFragment(detail: DetailView, now = Date.now()): SafeHtml {
  const timeline =
    detail.events.length === 0
      ? html`<p class="muted">No events: none yet, or removed after the retention period.</p>`
      : html`<ol class="timeline">${detail.events.map((e) => event(e, now))}</ol>`;
  return html`<div data-fragment="detail" data-title="Transaction ${detail.transaction.orderId}" data-moving="${String(stillMoving(detail))}">
${fields(detail, now)}
<h2>Metadata</h2>
${metadata(detail.transaction.metadata)}
${detail.ledgerEntries ? html`<h2>Ledger entries</h2>
${entriesTable(detail.ledgerEntries, now, { caption: 'How this transaction moved the balance, oldest first.', transactionLinks: false })}` : ''}
<h2>Events and callbacks</h2>
${timeline}
</div>`;
}

/**
 * What /ui's page adds after the fragment: the title (out of band, into the page's heading) and,
 * while money or a callback still moves, a notice that fetches the transaction again 3 s after it
 * is shown (htmx `load delay`): each answer brings the next one until everything has settled.
 */
export function detailControls(detail: DetailView): SafeHtml {
  const poll = stillMoving(detail)
    ? html`<p id="detail-live" class="muted hint" hx-get="${viewHref({ id: detail.transaction.id })}" hx-trigger="load delay:3s" hx-target="#detail-body">In progress: this page refreshes itself every few seconds until the transaction and its callbacks settle.</p>`
    : '';
  return html`<h1 id="detail-title" tabindex="-1" hx-swap-oob="true">Transaction ${isolate(detail.transaction.orderId)}</h1>
${poll}`;
}

export function renderDetailPage(assets: Assets, detail: DetailView, now = Date.now()): string {
  return layout(assets, `Transaction ${isolatedText(detail.transaction.orderId)}`, html`<p><a href="${viewHref({})}">← All transactions</a></p>
<h1>Transaction</h1>
${detailFragment(detail, now)}`);
}
