/**
 * Endpoint health: per callback URL (deposit, withdraw), its deliveries of the last 24 hours.
 * `healthFragment` is the one template: the no-script page wraps it in the layout, /ui's script
 * fetches it alone and shows it above the list.
 */
import { HEALTH_MAX_EVENTS, RECOVERY_MAX_AGE_DAYS, RECOVERY_MAX_EVENTS, type EndpointHealth, type EndpointHealthItem } from '@dw/contracts';
import type { Assets } from '../assets';
import { absoluteTime, isolate, timeCell } from './format';
import { html, type SafeHtml } from './html';
import { layout } from './layout';

const none = html`<span class="muted">none in the window</span>`;

function rate(item: EndpointHealthItem): SafeHtml | string {
  if (item.successRate === null) return html`<span class="muted">n/a</span>`;
  return `${(item.successRate * 100).toFixed(1)} %`;
}

function lastFailure(item: EndpointHealthItem, now: number): SafeHtml {
  const f = item.lastFailure;
  if (!f) return none;
  const what = f.statusCode === null ? (f.error ?? 'no reply') : f.error === null ? `HTTP ${f.statusCode}` : `HTTP ${f.statusCode}: ${f.error}`;
  return html`${timeCell(f.at, now)} <span class="error-text wrap">${isolate(what)}</span>`;
}

function card(item: EndpointHealthItem, now: number): SafeHtml {
  const title = item.type === 'deposit' ? 'Deposit callbacks' : 'Withdraw callbacks';
  return html`<article class="endpoint" data-type="${item.type}">
<h3>${title}</h3>
<p class="wrap">${item.url ? html`<code>${isolate(item.url)}</code>` : html`<span class="muted">No URL set: deliveries are skipped.</span>`}</p>
<dl class="fields health-fields">
<dt>Deliveries</dt><dd data-field="deliveries">${item.deliveries}</dd>
<dt>Success rate</dt><dd data-field="successRate">${rate(item)}</dd>
<dt>Retrying now</dt><dd data-field="retrying">${item.retrying}</dd>
<dt>Failed</dt><dd data-field="failed">${item.failed}</dd>
${item.skipped > 0 ? html`<dt>Skipped</dt><dd data-field="skipped">${item.skipped} <span class="muted">(no URL was set)</span></dd>` : ''}
<dt>Last success</dt><dd data-field="lastSuccess">${item.lastSuccessAt ? timeCell(item.lastSuccessAt, now) : none}</dd>
<dt>Last failure</dt><dd data-field="lastFailure">${lastFailure(item, now)}</dd>
</dl>
</article>`;
}

/**
 * "Recover failed since…": POST /api/recoverCallbacks for the chosen time (and type), sent by htmx
 * as JSON with the merchant's token (public/app.js turns the local time into an instant and says
 * how many callbacks were queued). Not a <form>: Enter must not submit it as a navigation; the
 * no-script page hides it (it needs the token header).
 */
function recoverAction(): SafeHtml {
  return html`<div class="recover needs-script" data-recover>
<h3>Recover failed callbacks</h3>
<p class="muted">Sends again every callback that ended failed or skipped (no URL was set) for the events created since the chosen time, in event order. At most ${RECOVERY_MAX_AGE_DAYS} days back and ${RECOVERY_MAX_EVENTS.toLocaleString('en-US')} events per call; callbacks already being sent are left alone.</p>
<div class="recover-fields">
<div><label for="recover-since">Failed since</label>
<input id="recover-since" name="since" type="datetime-local" step="1" required aria-describedby="recover-tz"></div>
<div><label for="recover-type">Which callbacks</label>
<select id="recover-type" name="type"><option value="">Deposits and withdraws</option><option value="deposit">Deposits only</option><option value="withdraw">Withdraws only</option></select></div>
<button type="button" data-action="recover" hx-post="/api/recoverCallbacks" hx-include="closest [data-recover]" hx-ext="json" hx-swap="none" hx-sync="this:drop" hx-disabled-elt="this">Recover failed since…</button>
</div>
<p id="recover-tz" class="muted hint">In your browser's time zone.</p>
<p class="action-status" role="status" aria-live="polite"></p>
</div>`;
}

export function healthFragment(health: EndpointHealth, now = Date.now()): SafeHtml {
  return html`<div data-fragment="health">
<p class="muted">Callbacks of the events created in the last ${health.windowHours} hours (since <time datetime="${health.since}" title="${health.since}">${absoluteTime(health.since)}</time>), at most the newest ${HEALTH_MAX_EVENTS.toLocaleString('en-US')} events. Success rate: succeeded out of succeeded and failed.</p>
<div class="endpoints">${health.endpoints.map((item) => card(item, now))}</div>
${recoverAction()}
</div>`;
}

export function renderHealthPage(assets: Assets, health: EndpointHealth, now = Date.now()): string {
  return layout(assets, 'Callback endpoint health', html`<p><a href="/ui/viewTransaction">← All transactions</a></p>
<h1>Callback endpoint health</h1>
${healthFragment(health, now)}`);
}
