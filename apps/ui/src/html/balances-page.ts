/**
 * The merchant's balances, one card per currency: available, held, incoming and the credit limit,
 * exact decimal strings with grouped digits, the four written to one count of fraction digits.
 * `balancesFragment` is the one template: /ui shows it above the transactions, the no-script page
 * wraps it in the layout.
 */
import type { Balance, BalanceList } from '@dw/contracts';
import type { Assets } from '../assets';
import { commonScale, money, withdrawable } from './format';
import { html, type SafeHtml } from './html';
import { layout } from './layout';

export const statementHref = (currency?: string) => (currency ? `/ui/statement?currency=${encodeURIComponent(currency)}` : '/ui/statement');

function card(b: Balance): SafeHtml {
  const [available, held, incoming, creditLimit] = commonScale([b.available, b.held, b.incoming, b.creditLimit]) as [string, string, string, string];
  const canWithdraw = withdrawable(available, creditLimit);
  // Below -creditLimit (history from before the ledger): why withdraws are refused.
  const blocked = /^0(\.0+)?$/.test(canWithdraw) && available.startsWith('-')
    ? html`<p class="warning" data-field="blocked">Withdraws in ${b.currency} are refused until a deposit or an adjustment brings available above −credit limit.</p>`
    : '';
  // data-statement lets /ui's script open the statement in place; without a script the href does it.
  return html`<article class="balance" data-currency="${b.currency}">
<h3>${b.currency}</h3>
<p class="available${available.startsWith('-') ? ' negative' : ''}" data-field="available">${money(available, b.currency)}</p>
<p class="muted hint">available</p>
${blocked}
<dl class="fields balance-fields">
<dt>Can withdraw</dt><dd data-field="withdrawable">${money(canWithdraw, b.currency)}</dd>
<dt>Held</dt><dd data-field="held">${money(held, b.currency)}</dd>
<dt>Incoming</dt><dd data-field="incoming">${money(incoming, b.currency)}</dd>
<dt>Credit limit</dt><dd data-field="creditLimit">${money(creditLimit, b.currency)}</dd>
</dl>
<p><a href="${statementHref(b.currency)}" data-statement="${b.currency}">Statement<span class="visually-hidden"> of ${b.currency}</span></a></p>
</article>`;
}

export function balancesFragment(list: BalanceList): SafeHtml {
  const body =
    list.balances.length === 0
      ? html`<p class="empty">No balances yet. A deposit shows here as incoming once it is created, and as available once it completes.</p>`
      : html`<div class="balances">${list.balances.map(card)}</div>`;
  return html`<div data-fragment="balances">
${body}
<p class="muted hint">Available may be spent; held is reserved by withdraws not yet final; incoming is deposits not yet final.</p>
</div>`;
}

export function renderBalancesPage(assets: Assets, list: BalanceList): string {
  return layout(assets, 'Balances', html`<p><a href="/ui/viewTransaction">← All transactions</a></p>
<h1>Balances</h1>
${balancesFragment(list)}`);
}
