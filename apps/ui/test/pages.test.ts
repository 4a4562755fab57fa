/** GET /ui (the interactive page) and its assets: no token, strict CSP, nothing inline. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { CONTENT_SECURITY_POLICY } from '../src/security-headers';
import { deadAddress } from './support/fake-transactions-svc';
import { startUi } from './support/ui-app';

const PUBLIC = path.join(__dirname, '..', 'public');

let ui: FastifyInstance;
beforeAll(async () => {
  // The page and its assets are static: no transactions-svc needed.
  ui = await startUi(await deadAddress());
});
afterAll(async () => {
  await ui?.close();
});

describe('GET /ui', () => {
  it('serves the page without a token, with the strict CSP', async () => {
    const res = await ui.inject({ method: 'GET', url: '/ui' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('has no inline script or style: only /ui/assets/htmx.min.js, app.js and app.css', async () => {
    const { body } = await ui.inject({ method: 'GET', url: '/ui' });
    const scripts = [...body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts).toHaveLength(2);
    expect(scripts[0]![1]).toMatch(/\ssrc="\/ui\/assets\/htmx\.min\.js\?v=[0-9a-f]+"/);
    expect(scripts[1]![1]).toMatch(/\ssrc="\/ui\/assets\/app\.js\?v=[0-9a-f]+"/);
    expect(scripts.map((s) => s[2])).toEqual(['', '']);
    expect(body).toMatch(/<link rel="stylesheet" href="\/ui\/assets\/app\.css\?v=[0-9a-f]+">/);
    expect(body).not.toMatch(/<style|\sstyle=/i);
    expect(body).not.toMatch(/\son\w+=/i);
    expect(body).not.toMatch(/javascript:/i);
  });

  it('labels every control', async () => {
    const { body } = await ui.inject({ method: 'GET', url: '/ui' });
    const ids = [...body.matchAll(/<(?:input|select)\b[^>]*\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThanOrEqual(7);
    for (const id of ids) expect(body).toContain(`<label for="${id}">`);
    expect(body).toContain('name="viewport"');
  });
});

describe('GET /ui/assets/*', () => {
  it.each([
    ['app.js', 'text/javascript; charset=utf-8', path.join(PUBLIC, 'app.js')],
    ['app.css', 'text/css; charset=utf-8', path.join(PUBLIC, 'app.css')],
    ['htmx.min.js', 'text/javascript; charset=utf-8', require.resolve('htmx.org/dist/htmx.min.js')],
  ])('serves %s with its content type and a cache header', async (name, type, file) => {
    const res = await ui.inject({ method: 'GET', url: `/ui/assets/${name}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+"$/);
    expect(res.body).toBe(readFileSync(file, 'utf8'));
  });

  it('configures htmx to evaluate nothing, add no inline style, keep no history and call this origin only', async () => {
    const { body } = await ui.inject({ method: 'GET', url: '/ui' });
    const meta = /<meta name="htmx-config" content="([^"]+)">/.exec(body)![1]!.replace(/&quot;/g, '"');
    expect(JSON.parse(meta)).toMatchObject({
      allowEval: false,
      allowScriptTags: false,
      includeIndicatorStyles: false,
      historyEnabled: false,
      selfRequestsOnly: true,
    });
    expect(body).not.toMatch(/\shx-on|js:/);
  });

  it('lets browsers keep the version the page links to for good, and revalidate with the ETag', async () => {
    const { body } = await ui.inject({ method: 'GET', url: '/ui' });
    const href = /src="(\/ui\/assets\/app\.js\?v=[0-9a-f]+)"/.exec(body)![1]!;
    const res = await ui.inject({ method: 'GET', url: href });
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const again = await ui.inject({ method: 'GET', url: href, headers: { 'if-none-match': res.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('answers 404 problem+json for any other name', async () => {
    for (const url of ['/ui/assets/nope.js', '/ui/assets/']) {
      const res = await ui.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
    // An encoded slash is no name at all: refused before routing (docs/api.md#request-paths).
    const climb = await ui.inject({ method: 'GET', url: '/ui/assets/..%2Fpackage.json' });
    expect(climb.statusCode).toBe(400);
    expect(climb.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'path' }] });
  });

  it('inserts only fragments the ui rendered: never builds markup from strings (no innerHTML and friends in app.js)', () => {
    const js = readFileSync(path.join(PUBLIC, 'app.js'), 'utf8');
    expect(js).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });
});
