/** renderDetailPage: choices the contract leaves to the page (metadata order, why nothing was sent). */
import { loadAssets } from '../src/assets';
import { renderDetailPage } from '../src/html/detail-page';
import { DETAIL } from './support/fixtures';

const assets = loadAssets();

describe('renderDetailPage', () => {
  it('lists metadata keys sorted, since their order carries no meaning', () => {
    const detail = { ...DETAIL, transaction: { ...DETAIL.transaction, metadata: { zeta: '1', alpha: '2', mid: '3' } } };
    const body = renderDetailPage(assets, detail);
    const keys = [...body.matchAll(/<td data-label="Key" class="wrap"><bdi>([^<]*)<\/bdi><\/td>/g)].map((m) => m[1]);
    expect(keys).toEqual(['alpha', 'mid', 'zeta']);
  });

  it('says a skipped delivery was not sent because no callback URL was set', () => {
    const skipped = { ...DETAIL.events[1]!, delivery: { status: 'skipped' as const, attempts: [] } };
    expect(renderDetailPage(assets, { ...DETAIL, events: [skipped] })).toContain('Not sent: no callback URL was set.');
    expect(renderDetailPage(assets, DETAIL)).toContain('No delivery attempts yet.');
  });

  it('shows why an attempt answered 200 failed all the same (its body did not arrive within the timeout)', () => {
    const error = 'timeout: the reply body did not complete within 15000 ms';
    const attempt = { attempt: 1, at: '2026-11-21T10:00:05.100Z', statusCode: 200, error, durationMs: 15000, url: 'https://shop.example/cb', trigger: 'automatic' as const };
    const retrying = { ...DETAIL.events[1]!, delivery: { status: 'retrying' as const, attempts: [attempt] } };
    expect(renderDetailPage(assets, { ...DETAIL, events: [retrying] })).toMatch(
      /<td data-label="Result">HTTP 200 <span class="error-text"><bdi>timeout: the reply body did not complete within 15000 ms<\/bdi><\/span><div class="muted wrap attempt-url">to <bdi>https:\/\/shop.example\/cb<\/bdi><\/div><\/td>/,
    );
  });

  it('shows where each attempt went, so a URL changed between attempts is seen', () => {
    const urls = [...renderDetailPage(assets, DETAIL).matchAll(/<div class="muted wrap attempt-url">to <bdi>([^<]*)<\/bdi><\/div>/g)].map((m) => m[1]);
    expect(urls).toEqual(['https://shop.example/cb', 'https://shop.example/cb', 'https://shop.example/callbacks/v2']);
  });

  it('tells support where the trace id leads', () => {
    expect(renderDetailPage(assets, DETAIL)).toMatch(/<code>4bf92f3577b34da6a3ce929d0e0e4736<\/code> <span class="muted hint">[^<]*Jaeger/);
  });
});
