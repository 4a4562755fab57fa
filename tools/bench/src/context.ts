/** What every scenario shares: the options, the receiver, the baseline, and the rows it reports. */
import pg from 'pg';
import amqp from 'amqplib';
import { messagingNames } from '@dw/messaging';
import { AMQP_URL, api, startStack, type ServiceName, type Stack } from '../../e2e/test/support/stack';
import type { Baseline, Receiver } from './processes';
import { RssSampler } from './rss';

export interface Options {
  quick: boolean;
  only: Set<string>;
}

export interface Row {
  figure: string;
  ours: string;
  baseline?: string;
  ratio?: string;
  oursLatency?: string;
  baselineLatency?: string;
  rss?: Record<string, number>;
  note?: string;
  /** The figures behind `ours` and `baseline`, for derived rows (flat cost). */
  value?: number;
  baseValue?: number;
  /** For the chart: ours / baseline (or the figure / its target) when it has one. */
  chartRatio?: number;
  /** The ratio the figure must reach (0.5 for throughput, 0.9 for flat cost, 1 for targets). */
  chartTarget?: number;
}

export interface Ctx {
  opts: Options;
  receiver: Receiver;
  baseline: Baseline;
  rows: Row[];
  log(msg: string): void;
}

export const SERVICES: ServiceName[] = ['api-gateway', 'transactions-svc', 'callback-svc', 'ui'];

/** Production defaults except a rate limit high enough for a load test, and quiet logs. */
export const STACK_ENV = { RATE_LIMIT_PER_SECOND: '1000000', LOG_LEVEL: 'error' };

/** BENCH_STACK_ENV (a JSON object) adds to or overrides the stacks' environment, to compare a setting in alternated runs. */
export function startBenchStack(label: string, extra: Record<string, string> = {}): Promise<Stack> {
  return startStack(`bench_${label}`, { ...STACK_ENV, ...JSON.parse(process.env.BENCH_STACK_ENV ?? '{}'), ...extra });
}

export function stackRss(stack: Stack): RssSampler {
  return new RssSampler(() => Object.fromEntries(SERVICES.map((s) => [s, stack.pid(s)])));
}

/** A merchant whose deposit callbacks go to the receiver under `path` (e.g. '/ok/create'). */
export async function merchantWithCallback(stack: Stack, path: string | null, name = 'Bench') {
  const m = stack.createMerchant(name);
  const res = await api(stack, m.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: path === null ? null : `${receiverBase}${path}` });
  if (res.status !== 200) throw new Error(`updateCallbackUrlDeposit: ${res.status} ${res.text}`);
  return m;
}
let receiverBase = '';
export function setReceiverBase(url: string) {
  receiverBase = url;
}

/** Messages ready in the stack's delivery queue. */
export async function deliverQueueDepth(stack: Stack): Promise<number> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    const q = await ch.checkQueue(messagingNames(stack.env.AMQP_PREFIX!).deliverQueue);
    await ch.close();
    return q.messageCount;
  } finally {
    await conn.close();
  }
}

export async function withDb<T>(stack: Stack, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const rssText = (rss: Record<string, number> | undefined) =>
  rss ? SERVICES.map((s) => (rss[s] === undefined ? '–' : Math.round(rss[s]!))).join('/') : '';
