/** Small pieces shared by the server-rendered pages. */
import { DELIVERY_STATUSES, TRANSACTION_STATUSES } from '@dw/contracts';
import { html, type SafeHtml } from './html';

const KNOWN_STATUSES = new Set<string>([...TRANSACTION_STATUSES, ...DELIVERY_STATUSES]);

/** A status badge; the class comes from a fixed list, never from the data itself. */
export function badge(status: string): SafeHtml {
  const cls = KNOWN_STATUSES.has(status) ? `badge-${status}` : 'badge-unknown';
  return html`<span class="badge ${cls}">${status}</span>`;
}

/**
 * Merchant-supplied text, bidi-isolated: a U+202E (right-to-left override) in an orderId, a
 * description or a metadata value then stays inside its own element instead of reversing the
 * page's text after it ("Clear filters" shown backwards). <bdi> needs no style and no script.
 */
export function isolate(text: string | number | null | undefined): SafeHtml {
  if (typeof text !== 'string' || !BIDI_CONTROL.test(text)) return html`<bdi>${text}</bdi>`;
  // Shown, not obeyed: an orderId "rtl-\u202Egpj.exe" would read "rtl-exe.jpg" even inside <bdi>.
  const parts = text.split(BIDI_CONTROL).map((part) =>
    BIDI_CONTROL.test(part) ? html`<span class="bidi-mark" title="a text-direction control character">⟨U+${part.codePointAt(0)!.toString(16).toUpperCase()}⟩</span>` : part,
  );
  return html`<bdi>${parts}</bdi>`;
}

// Unicode's explicit embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): what can
// turn letters around. The marks (U+200E, U+200F), which right-to-left text uses, are left as they are.
const BIDI_CONTROL = /([\u202A-\u202E\u2066-\u2069])/;

/**
 * Merchant-supplied text where no element can go (the <title>, where " · Deposit & Withdraw"
 * follows it): wrapped in U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE, the plain-text
 * form of <bdi>, so a U+202E in an orderId does not turn the tab's title around.
 */
export function isolatedText(text: string): string {
  return `\u2068${text}\u2069`;
}

/** "2026-11-21 10:00:00 UTC", from the ISO timestamp as given. */
export function absoluteTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "3 minutes ago", relative to the moment the page is rendered. */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const seconds = (new Date(iso).getTime() - now) / 1000;
  if (Number.isNaN(seconds)) return '';
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return relative.format(Math.round(seconds / size), unit);
  }
  return '';
}

/**
 * A <time>: the relative time ("3 minutes ago", as of rendering) and the absolute UTC time under
 * it. One zone (UTC) for every page, so the list, the detail and the CSV export agree.
 */
export function timeCell(iso: string, now?: number): SafeHtml {
  return html`<time datetime="${iso}" title="${iso}"><span class="relative">${relativeTime(iso, now)}</span> <span class="absolute muted">${absoluteTime(iso)}</span></time>`;
}

const DECIMAL = /^([+-]?)(\d+)(\.\d+)?$/;

/**
 * A decimal string with its integer part grouped by thousands ("1234567.891" → "1,234,567.891"),
 * every fraction digit kept. Done on the string, never through a number: "999999999999999999.99999999"
 * keeps all 26 digits. Anything that is not a plain decimal is shown as given.
 */
export function groupDigits(decimal: string): string {
  const m = DECIMAL.exec(decimal);
  if (!m) return decimal;
  return `${m[1]}${m[2]!.replace(/\B(?=(\d{3})+$)/g, ',')}${m[3] ?? ''}`;
}

/**
 * Plain decimals written with one count of fraction digits, the most any of them has, by padding
 * trailing zeros on the string: ["307.50", "0", "0.00"] → ["307.50", "0.00", "0.00"]. Every value
 * stays exact; a balance's parts then read alike rather than "0" beside "0.00" (the API writes each
 * as its arithmetic left it). Anything that is not a plain decimal is left as given.
 */
export function commonScale(decimals: string[]): string[] {
  const fractions = decimals.map((d) => DECIMAL.exec(d)?.[3]?.slice(1));
  const scale = Math.max(0, ...fractions.map((f) => f?.length ?? 0));
  return decimals.map((d, i) => (scale === 0 || !DECIMAL.test(d) ? d : `${d.split('.')[0]}.${(fractions[i] ?? '').padEnd(scale, '0')}`));
}

/**
 * What a withdraw may take now, as the API judges it: available + credit limit, never below 0, in
 * exact decimal arithmetic (BigInt at the pair's common scale, never a float). Both arguments are
 * the API's decimal strings written to one scale (commonScale).
 */
export function withdrawable(available: string, creditLimit: string): string {
  const scale = available.split('.')[1]?.length ?? 0;
  const units = (d: string) => BigInt(d.replace('.', ''));
  const sum = units(available) + units(creditLimit);
  if (sum <= 0n) return scale === 0 ? '0' : `0.${'0'.repeat(scale)}`;
  if (scale === 0) return sum.toString();
  const digits = sum.toString().padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** Amount exactly as transactions-svc gave it (a decimal string, never a float), digits grouped. */
export function money(amount: string, currency: string): SafeHtml {
  return html`<span class="amount">${groupDigits(amount)}</span> <span class="currency">${currency}</span>`;
}

/** A signed change of a balance: "+1,000.50", "-20", and "0" muted (that part did not move). */
export function change(amount: string): SafeHtml {
  if (/^[+-]?0+(\.0+)?$/.test(amount)) return html`<span class="muted">0</span>`;
  const signed = amount.startsWith('-') || amount.startsWith('+') ? amount : `+${amount}`;
  return html`<span class="amount ${signed.startsWith('-') ? 'debit' : 'credit'}">${groupDigits(signed)}</span>`;
}

export function viewHref(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
  const search = query.toString();
  return search ? `/ui/viewTransaction?${search}` : '/ui/viewTransaction';
}
