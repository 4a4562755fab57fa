/**
 * Isolation from a client with no token (docs/decisions.md, "The token-less pages are limited per
 * address too"): one client fetches the pages anyone may fetch (/openapi.json, the docs' script
 * bundle, /ui and one of its assets, in turn) in 16 loops, reading every byte and asking again,
 * while merchant B creates a deposit every 50 ms. The gateway runs with the product's own
 * PUBLIC_LIMIT_PER_MINUTE (the bench stacks otherwise lift it, as the e2e stacks do), or the one
 * BENCH_STACK_ENV names. Rounds
 * alternate B alone (the baseline) and B beside the client; the row is B's create latency on each
 * side, and the notes say how many of the client's requests were answered 200 and 429. The client
 * spends its burst (PUBLIC_LIMIT_PER_MINUTE) in the first round; later rounds see a client that
 * keeps flooding, which is what an attacker does.
 */
import { loadGatewayConfig } from '@dw/config';
import { Pool } from 'undici';
import { bAloneAndBeside } from './beside-b';
import { merchantWithCallback, stackRss, startBenchStack, type Ctx, type Row } from './context';
import { fmt, median } from './stats';

const LOOPS = 16;
const PAGES = ['/openapi.json', '/docs/static/swagger-ui-bundle.js', '/ui', '/ui/assets/htmx.min.js'];
/** The limit a deployment gets when it sets none, unless BENCH_STACK_ENV names one (to compare, e.g. 1000000: none). */
const PUBLIC_LIMIT_PER_MINUTE = Number(
  JSON.parse(process.env.BENCH_STACK_ENV ?? '{}').PUBLIC_LIMIT_PER_MINUTE ?? loadGatewayConfig({ INTERNAL_AUTH_SECRETS: 'x'.repeat(32) }).publicLimitPerMinute,
);

interface Flood {
  status: Record<number, number>;
  failed: number;
  seconds: number;
}

/** `LOOPS` loops of token-less requests, the pages in turn, each body read whole, until `until` settles. */
async function flood(pool: Pool, until: Promise<unknown>): Promise<Flood> {
  const out: Flood = { status: {}, failed: 0, seconds: 0 };
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, loop) => {
      for (let i = loop; !done; i++) {
        try {
          const res = await pool.request({ path: PAGES[i % PAGES.length]!, method: 'GET' });
          for await (const _chunk of res.body);
          out.status[res.statusCode] = (out.status[res.statusCode] ?? 0) + 1;
        } catch {
          out.failed++;
        }
      }
    }),
  );
  out.seconds = (performance.now() - start) / 1000;
  return out;
}

export async function publicFloodFigure(ctx: Ctx): Promise<Row> {
  const { quick } = ctx.opts;
  const stack = await startBenchStack('public', { PUBLIC_LIMIT_PER_MINUTE: String(PUBLIC_LIMIT_PER_MINUTE) });
  const client = new Pool(stack.gateway, { connections: LOOPS });
  const rss = stackRss(stack).start();
  try {
    const b = await merchantWithCallback(stack, '/ok/public-b', 'Merchant B');
    const run = await bAloneAndBeside(
      ctx,
      stack,
      b,
      { path: 'public-b', label: 'public', what: `a token-less client's ${LOOPS} loops`, baseline: 'no client', rounds: quick ? 2 : 3, seconds: quick ? 5 : 10 },
      (created) => flood(client, created),
    );
    const perSecond = (code: number) => fmt(median(run.loads.map((f) => (f.status[code] ?? 0) / f.seconds)));
    const others = run.loads.reduce((n, f) => n + f.failed + Object.entries(f.status).reduce((m, [code, k]) => m + (code === '200' || code === '429' ? 0 : k), 0), 0);
    return {
      figure: "Isolation: a token-less client floods the public pages, B's create latency",
      ...run.columns,
      rss: rss.stop(),
      note:
        `${run.noteOnB}; the client: ${LOOPS} loops over ${PAGES.join(', ')} from one address, PUBLIC_LIMIT_PER_MINUTE ${PUBLIC_LIMIT_PER_MINUTE}: ` +
        `${perSecond(200)} answers 200 and ${perSecond(429)} answers 429 a second` +
        (others ? `; ${others} of its requests neither` : ''),
    };
  } finally {
    rss.stop();
    await client.close();
    await stack.close({ verifyLedger: false });
  }
}
