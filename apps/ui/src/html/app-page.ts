/**
 * The interactive page's shell: labelled containers and the filter forms, wired with htmx
 * attributes. htmx (/ui/assets/htmx.min.js) fetches each view as the fragment the same templates
 * render for the no-script pages (list-page, detail-page, health-page, balances-page,
 * statement-page) and swaps it in, and fetches the CSV files; /ui/assets/app.js adds the merchant's
 * token header to every request and handles what htmx does not (sign-in, errors, what an action's
 * answer means, the #tx= route).
 * Its empty data: icon is the layout's (layout.ts says why).
 */
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '@dw/contracts';
import { assetHref, type Assets } from '../assets';
import { html } from './html';

const options = (values: readonly string[]) => values.map((v) => html`<option value="${v}">${v}</option>`);

/** A filter form's time range (the browser's local time; app.js sends it as an instant) and page size. */
const rangeAndSize = (prefix: string, from: string, to: string, size: string) => html`<div class="field wide"><label for="${prefix}-from">${from}</label>
<input id="${prefix}-from" name="from" type="datetime-local" step="1" aria-describedby="${prefix}-tz-hint"></div>
<div class="field wide"><label for="${prefix}-to">${to}</label>
<input id="${prefix}-to" name="to" type="datetime-local" step="1" aria-describedby="${prefix}-tz-hint"></div>
<div class="field"><label for="${prefix}-limit">${size}</label>
<select id="${prefix}-limit" name="limit"><option>10</option><option selected>20</option><option>50</option><option>100</option></select></div>`;

/**
 * Download CSV and Download statement CSV: htmx asks for every row matching the form's filters (no
 * page size) as CSV, with the token header like every request; app.js's `download` action saves it.
 */
const csvButton = (id: string, path: string, form: string, file: string, label: string) =>
  html`<button type="button" id="${id}" class="secondary" data-action="download" data-file="${file}" data-loading="Preparing the CSV…" hx-get="${path}" hx-include="#${form}" hx-params="not limit" hx-headers='{"Accept": "text/csv"}' hx-target="this" hx-swap="none" hx-sync="this:drop">${label}</button>`;

/**
 * htmx's settings, read from this meta tag when it starts: nothing evaluated as code (no hx-on,
 * no js: values: the CSP forbids eval), no <style> of its own and no <script> run from a fragment
 * (the CSP forbids inline ones), no history snapshots (they would keep merchant data in
 * localStorage), requests to this origin only, and every answer passed to app.js's error handling.
 */
const HTMX_CONFIG = JSON.stringify({
  allowEval: false,
  allowScriptTags: false,
  includeIndicatorStyles: false,
  historyEnabled: false,
  historyCacheSize: 0,
  selfRequestsOnly: true,
  getCacheBusterParam: false,
  defaultSettleDelay: 0,
  // Every status is handed to htmx:beforeSwap in app.js, which swaps a 2xx and explains the rest;
  // none is logged to the console as an htmx error.
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    { code: '[45]..', swap: false, error: false },
  ],
});

export function renderAppPage(assets: Assets): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Transactions · Deposit &amp; Withdraw</title>
<meta name="htmx-config" content="${HTMX_CONFIG}">
<link rel="stylesheet" href="${assetHref(assets, 'app.css')}">
<script src="${assetHref(assets, 'htmx.min.js')}" defer></script>
<script src="${assetHref(assets, 'app.js')}" defer></script>
</head>
<!-- Every request asks for HTML fragments; the CSV buttons and the actions ask for their own types. -->
<body hx-history="false" hx-headers='{"Accept": "text/html", "x-ui-fragment": "1"}'>
<a id="skip" class="skip-link" href="#list-table">Skip to the transactions</a>
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
<section id="balances-section" class="balances-section" aria-labelledby="balances-title">
<h2 id="balances-title">Balances</h2>
<div id="balances-status" class="status" role="status" aria-live="polite"></div>
<div id="balances-body" data-status-box="balances-status" hx-get="/ui/balances" hx-trigger="dw:load from:body, click from:#refresh, dw:moved from:body" hx-sync="this:replace"></div>
</section>
<h1 id="list-title" tabindex="-1">Transactions</h1>
<details id="filter-panel" class="filter-panel" open>
<summary>Filters <span id="filter-count" class="muted"></span></summary>
<form id="filters" class="filters" data-status-box="list-status" data-loading="Loading transactions…" hx-get="/ui/viewTransaction" hx-target="#list-table" hx-trigger="submit, reset delay:10ms, dw:load from:body, click from:#refresh, dw:moved from:body" hx-sync="#list-table:replace">
<div class="field"><label for="f-type">Type</label>
<select id="f-type" name="type"><option value="">Any</option>${options(TRANSACTION_TYPES)}</select></div>
<div class="field"><label for="f-status">Status</label>
<select id="f-status" name="status"><option value="">Any</option>${options(TRANSACTION_STATUSES)}</select></div>
<div class="field wide"><label for="f-order">Order ID</label>
<input id="f-order" name="orderId" maxlength="128" autocomplete="off" spellcheck="false"></div>
${rangeAndSize('f', 'Created from', 'Created before', 'Per page')}
<div class="actions">
<button type="submit">Apply filters</button>
<button type="reset" class="secondary">Clear filters</button>
<button type="button" id="refresh" class="secondary">Refresh</button>
${csvButton('download-csv', '/ui/viewTransaction', 'filters', 'transactions.csv', 'Download CSV')}
<a id="open-statement" href="/ui/statement" data-statement="">Statement</a>
<p id="f-tz-hint" class="muted hint">Dates are in your browser's time zone.</p>
</div>
</form>
</details>
<div id="list-status" class="status" role="status" aria-live="polite"></div>
<div id="list-announce" class="visually-hidden" role="status" aria-live="polite"></div>
<div id="list-table" tabindex="-1" data-status-box="list-status" hx-sync="this:replace"></div>
<section id="health" class="health" aria-labelledby="health-title">
<h2 id="health-title">Callback endpoints</h2>
<div id="health-status" class="status" role="status" aria-live="polite"></div>
<div id="health-body" data-status-box="health-status" hx-get="/ui/endpointHealth" hx-trigger="dw:load from:body, click from:#refresh, dw:moved from:body" hx-sync="this:replace"></div>
</section>
</section>

<section id="statement-view" aria-labelledby="statement-title" hidden>
<p><a href="#list">← Back to the transactions</a></p>
<h1 id="statement-title" tabindex="-1">Statement</h1>
<p class="muted">Every ledger entry of your balances, newest first, with the balance after each.</p>
<form id="statement-filters" class="filters" data-status-box="statement-status" data-loading="Loading the statement…" hx-get="/ui/statement" hx-target="#statement-table" hx-trigger="submit, reset delay:10ms, dw:statement from:body" hx-sync="#statement-table:replace">
<div class="field"><label for="s-currency">Currency</label>
<input id="s-currency" name="currency" maxlength="10" autocomplete="off" spellcheck="false" placeholder="All"></div>
${rangeAndSize('s', 'From', 'Before', 'Page size')}
<div class="actions">
<button type="submit">Show entries</button>
<button type="reset" class="secondary">Clear filters</button>
${csvButton('statement-csv', '/api/getBalanceHistory', 'statement-filters', 'statement.csv', 'Download statement CSV')}
<p id="s-tz-hint" class="muted hint">Dates are in your browser's time zone.</p>
</div>
</form>
<div id="statement-status" class="status" role="status" aria-live="polite"></div>
<div id="statement-announce" class="visually-hidden" role="status" aria-live="polite"></div>
<div id="statement-table" tabindex="-1" data-status-box="statement-status" hx-sync="this:replace"></div>
</section>

<section id="detail-view" aria-labelledby="detail-title" hidden>
<p><a id="back" href="#list">← Back to the list</a></p>
<div class="title-row">
<h1 id="detail-title" tabindex="-1">Transaction</h1>
<button id="detail-refresh" type="button" class="secondary">Refresh</button>
</div>
<div id="detail-status" class="status" role="status" aria-live="polite"></div>
<div id="detail-body" data-status-box="detail-status" data-loading="Loading the transaction…" hx-sync="this:replace"></div>
</section>
</main>
<!-- The Retry button app.js adds to a status box under an error that retrying can help. -->
<template id="retry"><button type="button" class="secondary">Retry</button></template>
</body>
</html>
`.value;
}
