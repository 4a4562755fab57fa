/**
 * Merchant-supplied strings cannot turn the page's own text around: each is rendered inside a
 * <bdi>, so a U+202E (right-to-left override) in an orderId, a filter, a metadata value or a
 * callback URL reverses only itself, never "Clear filters" or the labels after it.
 */
import { loadAssets } from '../src/assets';
import { renderDetailPage } from '../src/html/detail-page';
import { renderHealthPage } from '../src/html/health-page';
import { renderListPage } from '../src/html/list-page';
import { DEPOSIT, DETAIL, HEALTH, WITHDRAW } from './support/fixtures';

const assets = loadAssets();
const RLO = '\u202E';
const reversing = (text: string) => `${RLO}${text}`;
/** What the page shows in place of the override: a visible mark, obeyed by nothing. */
const MARK = '<span class="bidi-mark" title="a text-direction control character">⟨U+202E⟩</span>';

/**
 * The page's text with every <bdi> element, every attribute value and the <title> (not page
 * text) removed: what is left must hold no override.
 */
const outsideIsolation = (page: string) =>
  page
    .replace(/<bdi>[^<]*<\/bdi>/g, '')
    .replace(/"[^"]*"/g, '""')
    .replace(/<title>[^<]*<\/title>/, '');

const hostile = {
  ...DEPOSIT,
  orderId: reversing('order-1'),
  description: reversing('a description'),
  destination: reversing('IBAN'),
  metadata: { [reversing('key')]: reversing('value') },
};

describe('merchant text is bidi-isolated on every server-rendered page', () => {
  it('the list: the orderId filter and each orderId cell; "Clear filters" stays outside', () => {
    const page = renderListPage(assets, { items: [hostile, WITHDRAW], nextCursor: null }, { orderId: reversing('order-1'), limit: 20 });
    expect(page).toContain(`Order ID <strong><bdi>${MARK}order-1</bdi></strong>. <a href="/ui/viewTransaction?limit=20">Clear filters</a>`);
    expect(page).toContain(`><bdi>${MARK}order-1</bdi></a></td>`);
    expect(outsideIsolation(page)).not.toContain(RLO);
  });

  it('one transaction: orderId, description, destination, metadata keys and values', () => {
    const page = renderDetailPage(assets, { ...DETAIL, transaction: hostile });
    for (const text of ['order-1', 'a description', 'IBAN', 'key', 'value']) expect(page).toContain(`<bdi>${MARK}${text}</bdi>`);
    expect(outsideIsolation(page)).not.toContain(RLO);
  });

  it('one transaction: the tab title isolates the orderId, so the site name after it reads the right way', () => {
    const page = renderDetailPage(assets, { ...DETAIL, transaction: hostile });
    expect(page).toContain(`<title>Transaction \u2068${RLO}order-1\u2069 · Deposit &amp; Withdraw</title>`);
  });

  it('endpoint health: the callback URL and the last error', () => {
    const [deposit, withdraw] = HEALTH.endpoints;
    const endpoint = { ...deposit!, url: reversing('https://merchant.test/cb'), lastFailure: { ...deposit!.lastFailure!, error: reversing('connect ECONNREFUSED') } };
    const page = renderHealthPage(assets, { ...HEALTH, endpoints: [endpoint, withdraw!] });
    expect(page).toContain(`<code><bdi>${MARK}https://merchant.test/cb</bdi></code>`);
    expect(outsideIsolation(page)).not.toContain(RLO);
  });

  it('shows a direction control as a visible mark instead of obeying it, so "rtl-\\u202Egpj.exe" cannot pass for "rtl-exe.jpg"', () => {
    const spoof = { ...DEPOSIT, orderId: 'rtl-\u202Egpj.exe', description: 'a\u2066b\u2069c, مرحبا\u200F' };
    const page = renderDetailPage(assets, { ...DETAIL, transaction: spoof });
    expect(page).toContain(`<bdi>rtl-${MARK}gpj.exe</bdi>`);
    expect(page).toContain('<bdi>a<span class="bidi-mark" title="a text-direction control character">⟨U+2066⟩</span>b<span class="bidi-mark" title="a text-direction control character">⟨U+2069⟩</span>c, مرحبا\u200F</bdi>');
    // Only the tab title keeps the character (inside its own isolate: no element can go there), and
    // the attribute the script sets it from: no text of the page obeys it.
    expect(page.replace(/<title>[^<]*<\/title>/, '').replace(/"[^"]*"/g, '""')).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
  });
});
