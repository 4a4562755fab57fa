/**
 * The list of transactions. `listFragment` is the one template of the table: the no-script page
 * wraps it in the layout with links to page on, and /ui's script fetches it alone (x-ui-fragment)
 * and swaps it in, keeping its own Previous/Next buttons.
 */
import type { Transaction, TransactionPage } from '@dw/contracts';
import type { Assets } from '../assets';
import type { ListFilters } from '../transactions-client';
import { badge, isolate, money, timeCell, viewHref } from './format';
import { html, type SafeHtml } from './html';
import { layout } from './layout';
import { pager, type Trail } from './pager';

const FILTER_LABELS: Record<string, string> = { type: 'Type', status: 'Status', orderId: 'Order ID', from: 'From', to: 'To' };

const isFiltered = (filters: ListFilters) => Object.keys(FILTER_LABELS).some((key) => filters[key] !== undefined);

function filterSummary(filters: ListFilters): SafeHtml {
  const active = Object.entries(FILTER_LABELS).filter(([key]) => filters[key] !== undefined);
  if (active.length === 0) return html`<p class="muted">All transactions, newest first.</p>`;
  return html`<p class="muted">Filtered by ${active.map(
    ([key, label], i) => html`${i > 0 ? ', ' : ''}${label} <strong>${isolate(filters[key])}</strong>`,
  )}. <a href="${viewHref({ limit: filters.limit })}">Clear filters</a></p>`;
}

function row(tx: Transaction, now: number): SafeHtml {
  // data-tx lets /ui's script open the transaction in place; without a script the href does it.
  return html`<tr>
<td data-label="Created">${timeCell(tx.createdAt, now)}</td>
<td data-label="Type">${tx.type}</td>
<td data-label="Status">${badge(tx.status)}</td>
<td data-label="Amount" class="num">${money(tx.amount, tx.currency)}</td>
<td data-label="Order ID" class="wrap"><a href="${viewHref({ id: tx.id })}" data-tx="${tx.id}" title="Open transaction ${tx.id}">${isolate(tx.orderId)}</a></td>
</tr>`;
}

export function listFragment(page: TransactionPage, filters: ListFilters, now = Date.now()): SafeHtml {
  const body =
    page.items.length === 0
      ? html`<p class="empty">${
          isFiltered(filters) || filters.cursor !== undefined
            ? 'No transactions match these filters. Change or clear the filters.'
            : 'No transactions yet. Create one with POST /api/createDeposit or /api/createWithdraw, then refresh.'
        }</p>`
      : html`<div class="table-wrap"><table class="transactions">
<caption>Transactions, newest first. Open one by its order ID.</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Order ID</th></tr></thead>
<tbody>
${page.items.map((tx) => row(tx, now))}
</tbody>
</table></div>`;
  return html`<div data-fragment="list" data-next-cursor="${page.nextCursor ?? ''}">${body}</div>`;
}

/**
 * What /ui's page adds after the fragment: the pager (htmx buttons carrying their cursors) and, out
 * of band, the count of active filters beside the folded Filters panel.
 */
export function listControls(page: TransactionPage, filters: ListFilters, trail: Trail): SafeHtml {
  const { cursor, ...query } = filters;
  const active = Object.keys(FILTER_LABELS).filter((key) => filters[key] !== undefined).length;
  return html`${pager({ path: '/ui/viewTransaction', query, cursor: cursor as string | undefined, nextCursor: page.nextCursor, trail, target: 'list-table', idPrefix: '' })}
<span id="filter-count" class="muted" hx-swap-oob="true">${active ? `(${active} active)` : ''}</span>`;
}

export function renderListPage(assets: Assets, page: TransactionPage, filters: ListFilters, now = Date.now()): string {
  const nav = html`<nav class="pager" aria-label="Pages">
${filters.cursor !== undefined ? html`<a href="${viewHref({ ...filters, cursor: undefined })}">First page</a>` : ''}
${page.nextCursor !== null ? html`<a rel="next" href="${viewHref({ ...filters, cursor: page.nextCursor })}">Next page</a>` : ''}
</nav>`;
  return layout(assets, 'Transactions', html`<h1>Transactions</h1>
${filterSummary(filters)}
${listFragment(page, filters, now)}
${nav}`);
}
