/**
 * Memory under many merchants' list pages: N merchants, each holding ROWS of the largest rows the
 * API admits, each read its 100-row JSON pages (about 3.3 MB) in one loop, all at once: the most
 * pages in progress the gateway admits from N merchants (GATEWAY_MERCHANT_PAGE_CONCURRENCY, one
 * each). The row is each service's maximum RSS against the memory limit the Helm chart gives its
 * container (k8s/deposit-withdraw/values.yaml), so a platform team sees the headroom its pods keep
 * when every tenant pages through its largest rows at once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'undici';
import YAML from 'yaml';
import { merchantWithCallback, stackRss, startBenchStack, type Ctx, type Row } from './context';
import { readPages, seedLargestRows, type Reading } from './page-isolation';
import { fmt } from './stats';

const VALUES = path.join(__dirname, '..', '..', '..', 'k8s', 'deposit-withdraw', 'values.yaml');
const CHART_KEYS = { 'api-gateway': 'apiGateway', 'transactions-svc': 'transactionsSvc', 'callback-svc': 'callbackSvc', ui: 'ui' } as const;

/** Each service's container memory limit in the chart's values, in MB (as RSS is reported). */
export function chartMemoryLimitsMb(): Record<string, number> {
  const values = YAML.parse(readFileSync(VALUES, 'utf8')) as Record<string, { resources?: { limits?: { memory?: string } } }>;
  const out: Record<string, number> = {};
  for (const [service, key] of Object.entries(CHART_KEYS)) {
    const limit = values[key]?.resources?.limits?.memory;
    const m = /^(\d+)Mi$/.exec(limit ?? '');
    if (!m) throw new Error(`${key}.resources.limits.memory in ${VALUES}: expected <n>Mi, got ${limit}`);
    out[service] = (Number(m[1]) * 2 ** 20) / 1e6;
  }
  return out;
}

export async function pageMemoryFigure(ctx: Ctx): Promise<Row> {
  const merchants = ctx.opts.quick ? 12 : 60;
  const seconds = ctx.opts.quick ? 5 : 15;
  const limits = chartMemoryLimitsMb();
  const stack = await startBenchStack('readers');
  const pools: Pool[] = [];
  try {
    const ms = [];
    for (let i = 0; i < merchants; i++) ms.push(await merchantWithCallback(stack, null, `Reader ${i}`));
    ctx.log(`readers: ${merchants} merchants create their largest rows`);
    await Promise.all(ms.map((m) => seedLargestRows(stack, m)));
    pools.push(...ms.map(() => new Pool(stack.gateway, { connections: 1 })));
    ctx.log(`readers: ${merchants} merchants read pages for ${seconds} s`);
    const rss = stackRss(stack).start();
    const until = new Promise((done) => setTimeout(done, seconds * 1000));
    const readings: Reading[] = await Promise.all(ms.map((m, i) => readPages(pools[i]!, m.apiToken, until, 1)));
    const max = rss.stop();
    const share = Object.entries(max).map(([s, mb]) => ({ s, mb, of: mb / limits[s]! }));
    const worst = share.reduce((a, b) => (b.of > a.of ? b : a));
    const pages = readings.reduce((n, r) => n + r.pages, 0);
    const bytes = readings.reduce((n, r) => n + r.bytes, 0);
    const refused = readings.reduce((n, r) => n + r.other, 0);
    const perMerchant = readings.map((r) => r.pages);
    return {
      figure: `Memory: ${merchants} merchants read pages of their largest rows`,
      ours: `${worst.s} ${fmt(worst.mb)} MB`,
      baseline: `chart limit ${fmt(limits[worst.s]!)} MB`,
      ratio: fmt(worst.of),
      chartRatio: 1 / worst.of,
      rss: max,
      note:
        `each its own loop of /ui/viewTransaction?limit=100 as JSON for ${seconds} s: ${fmt(pages / seconds)} pages/s, ${fmt(bytes / 1e6 / seconds)} MB/s in all, ` +
        `${Math.min(...perMerchant)}–${Math.max(...perMerchant)} pages a merchant; ratio = RSS ÷ the chart's limit, worst service; ` +
        `limits MB gw/tx/cb/ui ${Object.keys(CHART_KEYS).map((s) => fmt(limits[s]!)).join('/')}` +
        (refused ? `; ${refused} pages not 200` : ''),
    };
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    await stack.close({ verifyLedger: false });
  }
}
