/**
 * An event with many attempts (up to 66: 6 automatic, 10 manual series of 6) shows its latest 5;
 * the earlier ones open in place from a closed <details>, no request needed. The JSON keeps them all.
 */
import { detailFragment } from '../src/html/detail-page';
import { MANY_ATTEMPTS, MERCHANT_ID } from './support/fixtures';
import { useUiWithUpstream } from './support/ui-app';

const t = useUiWithUpstream();
const get = (accept: string, fragment = false) =>
  t.ui.inject({
    method: 'GET',
    url: `/ui/viewTransaction?id=${MANY_ATTEMPTS.transaction.id}`,
    headers: { 'x-merchant-id': MERCHANT_ID, accept, ...(fragment ? { 'x-ui-fragment': '1' } : {}) },
  });

const attemptNumbers = (markup: string) => [...markup.matchAll(/<td data-label="Attempt">(\d+)/g)].map((m) => Number(m[1]));

describe.each([
  ['the no-script page', false],
  ['the fragment /ui swaps in', true],
])('an event with 12 attempts on %s', (_name, fragment) => {
  it('shows the latest 5 and keeps the 7 earlier in a closed <details> that reveals all 12', async () => {
    const res = await get('text/html', fragment);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    const details = body.match(/<details class="earlier-attempts"([^>]*)>([\s\S]*?)<\/details>/);
    expect(details).not.toBeNull();
    const [whole, attrs = '', inside = ''] = details!;
    expect(attrs).not.toMatch(/\bopen\b/); // closed until asked
    expect(inside).toContain('<summary>Show all 12 attempts (7 earlier)</summary>');
    expect(attemptNumbers(inside)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Outside the <details>: only the latest 5, in the API's order; opened, the page reads 1 to 12.
    expect(attemptNumbers(body.replace(whole, ''))).toEqual([8, 9, 10, 11, 12]);
    expect(attemptNumbers(body)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(body).toContain('Latest 5 of 12 attempts');
  });
});

describe('an event with at most 5 attempts', () => {
  it('shows them all in one table, with nothing to open', async () => {
    const five = { ...MANY_ATTEMPTS, events: [{ ...MANY_ATTEMPTS.events[0]!, delivery: { status: 'succeeded' as const, attempts: MANY_ATTEMPTS.events[0]!.delivery.attempts.slice(0, 5) } }] };
    const out = detailFragment(five).value;
    expect(out).not.toContain('<details');
    expect(attemptNumbers(out)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('the JSON answer', () => {
  it('still holds every attempt of the event', async () => {
    const res = await get('application/json');
    expect(res.statusCode).toBe(200);
    expect(res.json().events[0].delivery.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });
});
