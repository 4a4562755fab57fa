/**
 * Previous/Next for /ui's keyset-paged lists (transactions, statement), rendered by the server so
 * the page's script keeps no paging state. The API pages forward only (a cursor names the next
 * page), so going back needs the cursors of the pages before: each button carries them in its
 * `x-ui-trail` header (htmx's hx-headers), "<page number> <cursor> <cursor>…" oldest first, `.`
 * standing for the first page (which has no cursor). The trail holds the last TRAIL_MAX cursors;
 * further back, Previous goes to the first page.
 */
import { html, type SafeHtml } from './html';

export const HEADER_UI_TRAIL = 'x-ui-trail';
const TRAIL_MAX = 50;
const FIRST = '.';
const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;

export interface Trail {
  /** 1 for the first page. */
  page: number;
  /** Cursors of the pages before this one, oldest first; `.` for the first page. */
  back: string[];
}

/** The trail a request carries; a missing or malformed one is the first page's. */
export function readTrail(header: string | string[] | undefined): Trail {
  const parts = typeof header === 'string' ? header.trim().split(/ +/) : [];
  const page = Number(parts[0]);
  const back = parts.slice(1);
  if (!Number.isSafeInteger(page) || page < 2 || back.length > TRAIL_MAX) return { page: 1, back: [] };
  if (!back.every((c) => c === FIRST || CURSOR.test(c))) return { page: 1, back: [] };
  return { page, back };
}

const encodeTrail = (page: number, back: string[]) => [String(page), ...back.slice(-TRAIL_MAX)].join(' ');

export interface PagerSpec {
  /** The view's path, e.g. /ui/viewTransaction. */
  path: string;
  /** The applied filters (limit included), without the cursor. */
  query: Record<string, string | number | undefined>;
  cursor: string | undefined;
  nextCursor: string | null;
  trail: Trail;
  /** Element ids: the list's container (hx-target) and a prefix for the pager's own ids. */
  target: string;
  idPrefix: string;
}

function href(path: string, query: PagerSpec['query'], cursor: string | undefined): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...query, cursor })) if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

function button(id: string, label: string, spec: PagerSpec, to: { cursor: string | undefined; trail: string } | null): SafeHtml {
  if (!to) return html`<button id="${id}" type="button" class="secondary" disabled>${label}</button>`;
  const headers = JSON.stringify({ [HEADER_UI_TRAIL]: to.trail });
  return html`<button id="${id}" type="button" class="secondary" hx-get="${href(spec.path, spec.query, to.cursor)}" hx-target="#${spec.target}" hx-headers="${headers}">${label}</button>`;
}

/** The pager under a list, for /ui's script: buttons that fetch the previous or next page. */
export function pager(spec: PagerSpec): SafeHtml {
  const { page, back } = spec.trail;
  const here = spec.cursor ?? FIRST;
  const next = spec.nextCursor === null ? null : { cursor: spec.nextCursor, trail: encodeTrail(page + 1, [...back, here]) };
  // Back from page 2 (or past a trail cut at TRAIL_MAX) is the first page, which has no cursor.
  const before = back[back.length - 1];
  const previous =
    page === 1 ? null
    : page === 2 || before === undefined ? { cursor: undefined, trail: '' }
    : { cursor: before === FIRST ? undefined : before, trail: encodeTrail(page - 1, back.slice(0, -1)) };
  return html`<nav class="pager" aria-label="Pages">
${button(`${spec.idPrefix}prev`, 'Previous page', spec, previous)}
<span id="${spec.idPrefix}page-no">Page ${page}</span>
${button(`${spec.idPrefix}next`, 'Next page', spec, next)}
</nav>`;
}
