/**
 * The viewer's recovery actions (docs/api.md#redelivery-and-recovery), as the templates render them: "Redeliver" on an
 * event whose delivery has settled, "manual" on the attempts of a series the merchant started, and
 * the "Recover failed since…" panel. /ui's script runs them (tools/e2e ui-browser tests click them).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadAssets } from '../src/assets';
import { detailFragment } from '../src/html/detail-page';
import { healthFragment, renderHealthPage } from '../src/html/health-page';
import { DETAIL, HEALTH } from './support/fixtures';

const assets = loadAssets();
type Status = 'pending' | 'retrying' | 'succeeded' | 'failed' | 'skipped';

const withDelivery = (status: Status) => ({
  ...DETAIL,
  events: [{ ...DETAIL.events[0]!, id: 'evt_0123abcd', delivery: { ...DETAIL.events[0]!.delivery, status } }],
});

describe('the Redeliver button', () => {
  it.each<Status>(['succeeded', 'failed', 'skipped'])('is offered on an event whose delivery is %s, naming the event', (status) => {
    const out = detailFragment(withDelivery(status)).value;
    // htmx posts {"eventId"} as JSON (hx-ext="json", defined in public/app.js) with the token header.
    expect(out).toContain(
      '<button type="button" class="secondary" data-action="redeliver" hx-post="/api/redeliverCallback" hx-vals="{&quot;eventId&quot;:&quot;evt_0123abcd&quot;}" hx-ext="json" hx-swap="none" hx-sync="this:drop" hx-disabled-elt="this">Redeliver</button>',
    );
  });

  it.each<Status>(['pending', 'retrying'])('is not offered while the delivery is %s (a redelivery would be a 409)', (status) => {
    expect(detailFragment(withDelivery(status)).value).not.toContain('data-action="redeliver"');
  });

  it('is hidden on the no-script page, where no token header can be sent', () => {
    const out = detailFragment(withDelivery('failed')).value;
    expect(out).toMatch(/<div class="event-actions needs-script">/);
    const css = readFileSync(path.join(__dirname, '..', 'public', 'app.css'), 'utf8');
    expect(css).toContain('html:not(.scripted) .needs-script { display: none; }');
    expect(readFileSync(path.join(__dirname, '..', 'public', 'app.js'), 'utf8')).toContain("document.documentElement.classList.add('scripted')");
  });
});

describe('manual attempts', () => {
  it('marks the attempts of a manual series "manual", and only those', () => {
    const attempts = [
      { attempt: 1, at: '2026-11-21T10:00:00.100Z', statusCode: 500, error: null, durationMs: 4, url: 'https://shop.example/cb', trigger: 'automatic' as const },
      { attempt: 2, at: '2026-11-21T11:00:00.100Z', statusCode: 200, error: null, durationMs: 4, url: 'https://shop.example/cb', trigger: 'manual' as const },
    ];
    const detail = { ...DETAIL, events: [{ ...DETAIL.events[0]!, delivery: { status: 'succeeded' as const, attempts } }] };
    const rows = [...detailFragment(detail).value.matchAll(/<td data-label="Attempt">(.*?)<\/td>/g)].map((m) => m[1]);
    expect(rows).toEqual(['1', '2 <span class="tag" data-trigger="manual">manual</span>']);
  });
});

describe('the "Recover failed since…" panel', () => {
  it('has a time, a type and the action button, and states the limits', () => {
    const out = healthFragment(HEALTH).value;
    expect(out).toContain('<div class="recover needs-script" data-recover>');
    expect(out).toContain('<input id="recover-since" name="since" type="datetime-local"');
    expect(out).toContain('<label for="recover-since">Failed since</label>');
    expect(out).toContain('<select id="recover-type" name="type">');
    expect(out).toContain(
      '<button type="button" data-action="recover" hx-post="/api/recoverCallbacks" hx-include="closest [data-recover]" hx-ext="json" hx-swap="none" hx-sync="this:drop" hx-disabled-elt="this">Recover failed since…</button>',
    );
    expect(out).toContain('At most 14 days back and 10,000 events per call');
  });

  it('is no form: Enter in its field cannot navigate the page', () => {
    expect(renderHealthPage(assets, HEALTH)).not.toMatch(/<form[^>]*>[^]*data-action="recover"/);
  });
});
