/**
 * Picks JSON, HTML or CSV from an Accept header: the ui answers in the representation it picks, and
 * the gateway, which must know a list page from an export before the ui sees it, asks it the same. JSON is the default: no header, `*\/*`, or only types
 * we do not produce. HTML wins only when the client ranks it above JSON (as browsers do). CSV
 * (the export) only when `text/csv` is named and ranked at least as high as the others.
 */
export type Representation = 'json' | 'html' | 'csv';

interface Range {
  type: string;
  q: number;
  order: number;
}

function parseAccept(accept: string): Range[] {
  return accept.split(',').flatMap((part, order) => {
    const [media, ...params] = part.trim().toLowerCase().split(';');
    if (!media) return [];
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    return Number.isFinite(q) ? [{ type: media.trim(), q, order }] : [];
  });
}

/** The best q (and earliest position) among ranges that match `mediaType`, most specific first. */
function score(ranges: Range[], mediaType: string): { q: number; order: number; specificity: number } {
  const [major] = mediaType.split('/');
  let best = { q: 0, order: Infinity, specificity: -1 };
  for (const r of ranges) {
    const specificity = r.type === mediaType ? 2 : r.type === `${major}/*` ? 1 : r.type === '*/*' ? 0 : -1;
    if (specificity > best.specificity) best = { q: r.q, order: r.order, specificity };
  }
  return best;
}

type Score = ReturnType<typeof score>;

/**
 * `named` (text/csv, matched by name) is ranked at least as high as `other`, whatever matched
 * `other`: `*\/*` and `text/*` count with their q (`text/csv;q=0.9, *\/*` prefers JSON). At equal q a
 * wildcard defers to the named type, and of two named types the one listed first wins.
 */
function outranks(named: Score, other: Score): boolean {
  if (named.q !== other.q) return named.q > other.q;
  return other.specificity < 2 || named.order < other.order;
}

export function negotiate(accept: string | undefined): Representation {
  if (!accept) return 'json';
  const ranges = parseAccept(accept);
  const csv = score(ranges, 'text/csv');
  if (csv.specificity === 2 && csv.q > 0) {
    const others = [score(ranges, 'text/html'), score(ranges, 'application/json')];
    if (others.every((o) => outranks(csv, o))) return 'csv';
  }
  const html = score(ranges, 'text/html');
  const json = score(ranges, 'application/json');
  if (html.q <= 0) return 'json';
  if (html.q > json.q) return 'html';
  // Equal preference: a wildcard match defers to the named type, otherwise the one listed first.
  if (html.q === json.q && html.specificity > json.specificity) return 'html';
  if (html.q === json.q && html.specificity === json.specificity && html.order < json.order) return 'html';
  return 'json';
}
