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
  it('adds the interactive controls after the list: a pager that carries the cursors, and the count of filters', async () => {
    const first = (await get('/ui/viewTransaction?type=deposit&limit=10', true)).body;
    expect(first).toContain('<span id="page-no">Page 1</span>');
    expect(first).toContain('<button id="prev" type="button" class="secondary" disabled>Previous page</button>');
    expect(first).toContain(
      '<button id="next" type="button" class="secondary" hx-get="/ui/viewTransaction?type=deposit&amp;limit=10&amp;cursor=cursor-page-2" hx-target="#list-table" hx-headers="{&quot;x-ui-trail&quot;:&quot;2 .&quot;}">Next page</button>',
    );
    expect(first).toContain('<span id="filter-count" class="muted" hx-swap-oob="true">(1 active)</span>');
    const second = await t.ui.inject({
      method: 'GET',
      url: '/ui/viewTransaction?type=deposit&limit=10&cursor=cursor-page-2',
      headers: { 'x-merchant-id': MERCHANT_ID, accept: 'text/html', 'x-ui-fragment': '1', 'x-ui-trail': '2 .' },
    });
    expect(second.body).toContain('<span id="page-no">Page 2</span>');
    expect(second.body).toContain('<button id="prev" type="button" class="secondary" hx-get="/ui/viewTransaction?type=deposit&amp;limit=10" hx-target="#list-table" hx-headers="{&quot;x-ui-trail&quot;:&quot;&quot;}">Previous page</button>');
    expect(second.body).toContain('<button id="next" type="button" class="secondary" disabled>Next page</button>');
  });

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
    // After the fragment, /ui's page gets its controls (the pager, the title, the refresh notice).
    const [own, controls = ''] = fragment.body.split(/\n(?=<nav class="pager"|<h1 id="detail-title")/);
    expect(stable(page.body)).toContain(stable(own!));
    expect(page.body).not.toContain(controls.trim() || 'no controls');
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

  it('answers an error to a fragment request as problem+json, as every error is (the page’s script words it)', async () => {
    const res = await get('/ui/viewTransaction?id=11111111-2222-4333-8444-555555555555', true);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 404, code: 'not_found', detail: 'No transaction with this id.' });
  });

  it('says whether an empty list is filtered', async () => {
    const res = await get('/ui/viewTransaction?cursor=cursor-page-2', true);
    expect(res.body).toContain('No transactions match these filters.');
    expect(HEALTH.endpoints).toHaveLength(2);
  });
});
