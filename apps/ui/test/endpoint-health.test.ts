/** GET /ui/endpointHealth: per callback URL, the last 24 hours of deliveries, as JSON or HTML. */
import { HEALTH, MERCHANT_ID } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();
const get = (accept: string, headers: Record<string, string> = { 'x-merchant-id': MERCHANT_ID }) =>
  t.ui.inject({ method: 'GET', url: '/ui/endpointHealth', headers: { accept, ...headers } });

describe('GET /ui/endpointHealth', () => {
  it('answers JSON by default, as transactions-svc computed it, never cached', async () => {
    const res = await get('application/json');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(HEALTH);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('renders per URL: deliveries, success rate, retrying now, failed, last success, last failure with its error, escaped', async () => {
    const { body } = await get('text/html');
    const deposit = body.slice(body.indexOf('data-type="deposit"'), body.indexOf('data-type="withdraw"'));
    expect(deposit).toContain('https://merchant.test/cb?a=1&amp;b=&lt;2&gt;');
    expect(deposit).toContain('<dd data-field="deliveries">10</dd>');
    expect(deposit).toContain('<dd data-field="successRate">87.5 %</dd>');
    expect(deposit).toContain('<dd data-field="retrying">2</dd>');
    expect(deposit).toContain('<dd data-field="failed">1</dd>');
    expect(deposit).toMatch(/data-field="lastSuccess"><time datetime="2026-11-21T09:59:00.000Z"/);
    expect(deposit).toContain('&lt;b&gt;connect ECONNREFUSED&lt;/b&gt;');
    expect(body).not.toContain('<b>');
    const withdraw = body.slice(body.indexOf('data-type="withdraw"'));
    expect(withdraw).toContain('No URL set: deliveries are skipped.');
    expect(withdraw).toContain('<dd data-field="successRate"><span class="muted">n/a</span></dd>');
  });

  it('answers 401 without the gateway’s merchant', async () => {
    const res = await get('application/json', {});
    expect(res.statusCode).toBe(401);
  });
});
