/**
 * The interactive page's shell: labelled, empty containers and the filter options. /ui/assets/app.js
 * fills them with fragments rendered by the same templates as the no-script pages (list-page,
 * detail-page, health-page), fetched with the merchant's token header. Its empty data: icon is
 * the layout's (layout.ts says why).
 */
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '@dw/contracts';
import { assetHref, type Assets } from '../assets';
import { html } from './html';

const options = (values: readonly string[]) => values.map((v) => html`<option value="${v}">${v}</option>`);

export function renderAppPage(assets: Assets): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Transactions · Deposit &amp; Withdraw</title>
<link rel="stylesheet" href="${assetHref(assets, 'app.css')}">
<script src="${assetHref(assets, 'app.js')}" defer></script>
</head>
<body>
<header class="site-header">
<a class="brand" href="/ui">Deposit &amp; Withdraw</a>
<button id="sign-out" type="button" class="secondary" hidden>Sign out</button>
</header>
<main id="main">
<noscript><p class="notice">This page needs JavaScript. Without it, request <code>/ui/viewTransaction</code> with <code>Accept: text/html</code> and your <code>serviceApiToken</code> header.</p></noscript>

<section id="signin" aria-labelledby="signin-title" hidden>
<h1 id="signin-title">View your transactions</h1>
<p>Paste your API token: the <code>apiToken</code> that <code>merchant:create</code> printed. It stays in this browser tab until you sign out or close the tab, and is sent only in the <code>serviceApiToken</code> header.</p>
<div id="signin-error" class="notice error" role="alert" hidden></div>
<!-- No name on the input and a POST action: even if the script never ran, a native submit could not put the token in a URL. -->
<form id="token-form" class="token-form" method="post" action="/ui" autocomplete="off">
<label for="token">API token</label>
<input id="token" type="password" required autocomplete="off" autocapitalize="off" spellcheck="false">
<button type="submit">Show transactions</button>
</form>
</section>

<section id="list-view" aria-labelledby="list-title" hidden>
<h1 id="list-title">Transactions</h1>
<details id="filter-panel" class="filter-panel" open>
<summary>Filters <span id="filter-count" class="muted"></span></summary>
<form id="filters" class="filters">
<div class="field"><label for="f-type">Type</label>
<select id="f-type" name="type"><option value="">Any</option>${options(TRANSACTION_TYPES)}</select></div>
<div class="field"><label for="f-status">Status</label>
<select id="f-status" name="status"><option value="">Any</option>${options(TRANSACTION_STATUSES)}</select></div>
<div class="field wide"><label for="f-order">Order ID</label>
<input id="f-order" name="orderId" maxlength="128" autocomplete="off" spellcheck="false"></div>
<div class="field wide"><label for="f-from">Created from</label>
<input id="f-from" name="from" type="datetime-local" step="1" aria-describedby="tz-hint"></div>
<div class="field wide"><label for="f-to">Created before</label>
<input id="f-to" name="to" type="datetime-local" step="1" aria-describedby="tz-hint"></div>
<div class="field"><label for="f-limit">Per page</label>
<select id="f-limit" name="limit"><option>10</option><option selected>20</option><option>50</option><option>100</option></select></div>
<div class="actions">
<button type="submit">Apply filters</button>
<button type="reset" class="secondary">Clear filters</button>
<button type="button" id="refresh" class="secondary">Refresh</button>
<button type="button" id="download-csv" class="secondary">Download CSV</button>
<p id="tz-hint" class="muted hint">Dates are in your browser's time zone.</p>
</div>
</form>
</details>
<div id="list-status" class="status" role="status" aria-live="polite"></div>
<div id="list-table"></div>
<nav class="pager" aria-label="Pages">
<button id="prev" type="button" class="secondary" disabled>Previous page</button>
<span id="page-no"></span>
<button id="next" type="button" class="secondary" disabled>Next page</button>
</nav>
<section id="health" class="health" aria-labelledby="health-title">
<h2 id="health-title">Callback endpoints</h2>
<div id="health-status" class="status" role="status" aria-live="polite"></div>
<div id="health-body"></div>
</section>
</section>

<section id="detail-view" aria-labelledby="detail-title" hidden>
<p><a id="back" href="#list">← Back to the list</a></p>
<div class="title-row">
<h1 id="detail-title" tabindex="-1">Transaction</h1>
<button id="detail-refresh" type="button" class="secondary">Refresh</button>
</div>
<div id="detail-status" class="status" role="status" aria-live="polite"></div>
<p id="detail-live" class="muted hint" hidden>In progress: this page refreshes itself every few seconds until the transaction and its callbacks settle.</p>
<div id="detail-body"></div>
</section>
</main>
</body>
</html>
`.value;
}
