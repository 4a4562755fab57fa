/** The server-rendered list: a table of one page of transactions, newest first, and a next-page link. */
import type { Transaction, TransactionPage } from '@dw/contracts';
import type { Assets } from '../assets';
import { badge, money, timeCell, viewHref } from './format';
import { html, type SafeHtml } from './html';
import { layout } from './layout';
import type { ListFilters } from '../transactions-client';

const FILTER_LABELS: Record<string, string> = { type: 'Type', status: 'Status', orderId: 'Order ID', from: 'From', to: 'To' };

function filterSummary(filters: ListFilters): SafeHtml {
  const active = Object.entries(FILTER_LABELS).filter(([key]) => filters[key] !== undefined);
  if (active.length === 0) return html`<p class="muted">All transactions, newest first.</p>`;
  return html`<p class="muted">Filtered by ${active.map(
    ([key, label], i) => html`${i > 0 ? ', ' : ''}${label} <strong>${filters[key]}</strong>`,
  )}. <a href="${viewHref({ limit: filters.limit })}">Clear filters</a></p>`;
}

function row(tx: Transaction, now: number): SafeHtml {
  return html`<tr>
<td data-label="Created">${timeCell(tx.createdAt, now)}</td>
<td data-label="Type">${tx.type}</td>
<td data-label="Status">${badge(tx.status)}</td>
<td data-label="Amount" class="num">${money(tx.amount, tx.currency)}</td>
<td data-label="Order ID" class="wrap">${tx.orderId}</td>
<td data-label="Transaction"><a href="${viewHref({ id: tx.id })}">${tx.id}</a></td>
</tr>`;
}

export function renderListPage(assets: Assets, page: TransactionPage, filters: ListFilters, now = Date.now()): string {
  const table =
    page.items.length === 0
      ? html`<p class="empty">No transactions match. Create one with <code>POST /api/createDeposit</code>, or clear the filters.</p>`
      : html`<div class="table-wrap"><table class="transactions">
<caption>Transactions, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Order ID</th><th scope="col">Transaction</th></tr></thead>
<tbody>
${page.items.map((tx) => row(tx, now))}
</tbody>
</table></div>`;
  const nav = html`<nav class="pager" aria-label="Pages">
${filters.cursor !== undefined ? html`<a href="${viewHref({ ...filters, cursor: undefined })}">First page</a>` : ''}
${page.nextCursor !== null ? html`<a rel="next" href="${viewHref({ ...filters, cursor: page.nextCursor })}">Next page</a>` : ''}
</nav>`;
  return layout(assets, 'Transactions', html`<h1>Transactions</h1>
${filterSummary(filters)}
${table}
${nav}`);
}
