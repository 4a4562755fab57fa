/**
 * The statement: the merchant's ledger entries, newest first, each with the balance after it.
 * `statementFragment` is the one template: /ui's statement view swaps it in (with the pager of
 * `statementControls`), the no-script page wraps it in the layout with links to page on.
 */
import type { BalanceHistoryPage, BalanceHistoryQuery } from '@dw/contracts';
import type { Assets } from '../assets';
import { statementHref } from './balances-page';
import { isolate } from './format';
import { html, type SafeHtml } from './html';
import { layout } from './layout';
import { entriesTable } from './ledger-entries';
import { pager, type Trail } from './pager';

const FILTER_LABELS = { currency: 'Currency', from: 'From', to: 'To' } as const;
const isFiltered = (q: BalanceHistoryQuery) => Object.keys(FILTER_LABELS).some((k) => q[k as keyof typeof FILTER_LABELS] !== undefined);

const search = (q: Record<string, string | number | undefined>) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v));
  const text = params.toString();
  return text ? `/ui/statement?${text}` : '/ui/statement';
};

export function statementFragment(page: BalanceHistoryPage, query: BalanceHistoryQuery, now = Date.now()): SafeHtml {
  const body =
    page.items.length === 0
      ? html`<p class="empty">${isFiltered(query) || query.cursor !== undefined ? 'No ledger entries match these filters. Change or clear the filters.' : 'No ledger entries yet: they appear as deposits and withdraws are created and settle.'}</p>`
      : entriesTable(page.items, now, { caption: 'Ledger entries, newest first.', transactionLinks: true });
  return html`<div data-fragment="statement" data-next-cursor="${page.nextCursor ?? ''}">${body}</div>`;
}

/** What /ui's statement view adds after the fragment: the pager (htmx buttons carrying their cursors). */
export function statementControls(page: BalanceHistoryPage, query: BalanceHistoryQuery, trail: Trail): SafeHtml {
  const { cursor, ...rest } = query;
  return pager({ path: '/ui/statement', query: rest, cursor, nextCursor: page.nextCursor, trail, target: 'statement-table', idPrefix: 'statement-' });
}

export function renderStatementPage(assets: Assets, page: BalanceHistoryPage, query: BalanceHistoryQuery, now = Date.now()): string {
  const active = Object.entries(FILTER_LABELS).filter(([k]) => query[k as keyof typeof FILTER_LABELS] !== undefined);
  const summary = active.length
    ? html`<p class="muted">Filtered by ${active.map(([k, label], i) => html`${i > 0 ? ', ' : ''}${label} <strong>${isolate(query[k as keyof typeof FILTER_LABELS])}</strong>`)}. <a href="${statementHref()}">Clear filters</a></p>`
    : html`<p class="muted">Every ledger entry, newest first.</p>`;
  const nav = html`<nav class="pager" aria-label="Pages">
${query.cursor !== undefined ? html`<a href="${search({ ...query, cursor: undefined })}">First page</a>` : ''}
${page.nextCursor !== null ? html`<a rel="next" href="${search({ ...query, cursor: page.nextCursor })}">Next page</a>` : ''}
</nav>`;
  return layout(assets, 'Statement', html`<p><a href="/ui/viewTransaction">← All transactions</a></p>
<h1>Statement</h1>
${summary}
${statementFragment(page, query, now)}
${nav}`);
}
