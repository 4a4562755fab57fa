/**
 * Ledger entries as a table: a transaction's own (its detail) and the merchant's statement. Each
 * part of the balance (available, held, incoming) shows the entry's signed change and the balance
 * right after it, both exact decimal strings with grouped digits (the three balances after it to
 * one count of fraction digits).
 */
import type { BalanceEntry } from '@dw/contracts';
import { absoluteTime, change, commonScale, groupDigits, isolate, timeCell } from './format';
import { html, type SafeHtml } from './html';

const PARTS = [
  ['available', 'Available'],
  ['held', 'Held'],
  ['incoming', 'Incoming'],
] as const;

function part(entry: BalanceEntry, key: (typeof PARTS)[number][0], label: string, after: string): SafeHtml {
  return html`<td data-label="${label}" class="num" data-part="${key}"><span data-field="change">${change(entry.change[key])}</span>
<span class="after muted" data-field="after">${groupDigits(after)}</span></td>`;
}

/** What the entry is about: its transaction (a link on the statement), an operator's reason and reference. */
function about(entry: BalanceEntry, transactionLinks: boolean): SafeHtml {
  const tx = entry.transactionId;
  const link = tx === null ? '' : transactionLinks
    ? html`<a href="/ui/viewTransaction?id=${tx}" data-tx="${tx}">Transaction<span class="visually-hidden"> of the ${entry.kind} entry of ${absoluteTime(entry.createdAt)}</span></a>`
    : '';
  const reason = entry.reason === null ? '' : html`<span class="reason">${isolate(entry.reason)}</span>`;
  const reference = entry.reference === null ? '' : html` <span class="muted">ref <bdi>${entry.reference}</bdi></span>`;
  return html`${link}${link && (reason || reference) ? ' ' : ''}${reason}${reference}`;
}

function row(entry: BalanceEntry, now: number, transactionLinks: boolean): SafeHtml {
  // The balance after the entry, its three parts to one count of fraction digits ("0" beside "5.00" reads as 0.00).
  const after = commonScale(PARTS.map(([key]) => entry[key]));
  return html`<tr data-entry="${entry.id}">
<td data-label="Time">${timeCell(entry.createdAt, now)}</td>
<td data-label="Entry"><span data-field="kind">${entry.kind}</span> <span class="currency">${entry.currency}</span></td>
${PARTS.map(([key, label], i) => part(entry, key, label, after[i]!))}
<td data-label="About" class="wrap">${about(entry, transactionLinks)}</td>
</tr>`;
}

export interface EntriesOptions {
  caption: string;
  /** Link each entry to its transaction (the statement); a transaction's own detail does not. */
  transactionLinks: boolean;
}

export function entriesTable(entries: BalanceEntry[], now: number, options: EntriesOptions): SafeHtml {
  if (entries.length === 0) return html`<p class="muted empty-entries">No ledger entries.</p>`;
  return html`<div class="table-wrap"><table class="ledger">
<caption>${options.caption} Each part shows its change and, under it, the balance after the entry.</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Entry</th>${PARTS.map(([, label]) => html`<th scope="col" class="num">${label}</th>`)}<th scope="col">About</th></tr></thead>
<tbody>
${entries.map((e) => row(e, now, options.transactionLinks))}
</tbody>
</table></div>`;
}
