/**
 * One renderer: /ui's script asks for a view with `x-ui-fragment: 1` and gets exactly the markup
 * the no-script page wraps in its layout, so the interactive page and the no-script pages share
 * every template.
 */
import { DEPOSIT, DETAIL, HEALTH, HOSTILE, HOSTILE_ESCAPED, MERCHANT_ID } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();
const get = (url: string, fragment: boolean) =>
  t.ui.inject({
    method: 'GET',
    url,
    headers: { 'x-merchant-id': MERCHANT_ID, accept: 'text/html', ...(fragment ? { 'x-ui-fragment': '1' } : {}) },
  });

/** Relative times ("3 minutes ago") depend on the moment of rendering: compared without them. */
const stable = (markup: string) => markup.replace(/<span class="relative">[^<]*<\/span>/g, '');

describe('x-ui-fragment: the same templates as the no-script pages', () => {
  it.each([
    ['the list', '/ui/viewTransaction?type=deposit', 'list'],
    ['one transaction', `/ui/viewTransaction?id=${DETAIL.transaction.id}`, 'detail'],
    ['endpoint health', '/ui/endpointHealth', 'health'],
  ])('%s: the fragment is the page’s own fragment, no document around it', async (_name, url, kind) => {
    const fragment = await get(url, true);
    const page = await get(url, false);
    expect(fragment.statusCode).toBe(200);
    expect(fragment.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(fragment.headers['content-security-policy']).toBeDefined();
    expect(fragment.headers.vary).toContain('x-ui-fragment');
    expect(fragment.body).toMatch(new RegExp(`^<div data-fragment="${kind}"`));
    expect(fragment.body).not.toMatch(/<html|<head|<script/i);
    expect(stable(page.body)).toContain(stable(fragment.body));
  });

  it('marks the list with the next cursor and the detail with its title and whether it still moves', async () => {
    expect((await get('/ui/viewTransaction', true)).body).toContain('data-next-cursor="cursor-page-2"');
    const detail = (await get(`/ui/viewTransaction?id=${DETAIL.transaction.id}`, true)).body;
    expect(detail).toContain(`data-title="Transaction ${HOSTILE_ESCAPED}"`);
    expect(detail).toContain('data-moving="true"'); // one delivery is retrying
    expect(detail).not.toContain(HOSTILE);
  });

  it('links each order ID to its transaction, for the script (data-tx) and without it (href)', async () => {
    const list = (await get('/ui/viewTransaction', true)).body;
    expect(list).toContain(`<a href="/ui/viewTransaction?id=${DEPOSIT.id}" data-tx="${DEPOSIT.id}" title="Open transaction ${DEPOSIT.id}"><bdi>${HOSTILE_ESCAPED}</bdi></a>`);
  });

  it('answers an error as a fragment with the problem’s facts', async () => {
    const res = await get('/ui/viewTransaction?id=11111111-2222-4333-8444-555555555555', true);
    expect(res.statusCode).toBe(404);
    expect(res.body).toMatch(/^<div data-fragment="error" data-status="404">/);
    expect(res.body).toContain('No transaction with this id.');
    expect(res.body).not.toMatch(/<html/i);
  });

  it('says whether an empty list is filtered', async () => {
    const res = await get('/ui/viewTransaction?cursor=cursor-page-2', true);
    expect(res.body).toContain('No transactions match these filters.');
    expect(HEALTH.endpoints).toHaveLength(2);
  });
});
