/**
 * Endpoint health for one merchant: per callback URL (deposit, withdraw), the deliveries of the
 * events created in the last 24 hours. Bounded by design: the events are found through the
 * (merchant_id, created_at) index and the window, their deliveries by primary key and their
 * attempts through (event_id, attempt); never the merchant's whole history.
 */
import { HEALTH_WINDOW_HOURS, TRANSACTION_TYPES, type EndpointHealth, type EndpointHealthItem } from '@dw/contracts';
import type pg from 'pg';
import { query, raw, sql } from '@dw/db';
import { iso } from './transaction-sql';

interface CountRow {
  kind: string;
  deliveries: number;
  succeeded: number;
  failed: number;
  retrying: number;
  pending: number;
  skipped: number;
}

interface LastRow {
  kind: string;
  ok: boolean;
  at: string;
  status_code: number | null;
  error: string | null;
}

export async function endpointHealth(db: pg.Pool, merchantId: string): Promise<EndpointHealth | undefined> {
  const urls = sql`
    SELECT deposit_callback_url AS deposit, withdraw_callback_url AS withdraw,
           ${raw(iso(`(now() - make_interval(hours => ${HEALTH_WINDOW_HOURS}))`))} AS since
      FROM merchants WHERE id = ${merchantId}::uuid`;
  const [merchant] = await query<{ deposit: string | null; withdraw: string | null; since: string }>(db, urls);
  if (!merchant) return undefined;

  const perType = sql`
    SELECT split_part(e.type, '.', 1) AS kind,
           count(*)::int AS deliveries,
           count(*) FILTER (WHERE d.status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
           count(*) FILTER (WHERE d.status = 'retrying')::int AS retrying,
           count(*) FILTER (WHERE d.status = 'pending' OR d.status IS NULL)::int AS pending,
           count(*) FILTER (WHERE d.status = 'skipped')::int AS skipped
      FROM transaction_events e
      LEFT JOIN callback_deliveries d ON d.event_id = e.id
     WHERE e.merchant_id = ${merchantId}::uuid AND e.created_at >= ${merchant.since}::timestamptz
     GROUP BY 1`;
  // The newest successful and the newest failed attempt per type, among the window's events.
  const newest = sql`
    SELECT DISTINCT ON (kind, ok) kind, ok, ${raw(iso('at'))} AS at, status_code, error
      FROM (SELECT split_part(e.type, '.', 1) AS kind, COALESCE(a.status_code = 200, false) AS ok, a.at, a.status_code, a.error
              FROM transaction_events e
              JOIN callback_attempts a ON a.event_id = e.id
             WHERE e.merchant_id = ${merchantId}::uuid AND e.created_at >= ${merchant.since}::timestamptz) x
     ORDER BY kind, ok, at DESC`;
  // Two reads of the same window, independent of each other: on two pooled connections at once.
  const [counts, last] = await Promise.all([query<CountRow>(db, perType), query<LastRow>(db, newest)]);

  const endpoints = TRANSACTION_TYPES.map((type): EndpointHealthItem => {
    const c = counts.find((r) => r.kind === type);
    const success = last.find((r) => r.kind === type && r.ok);
    const failure = last.find((r) => r.kind === type && !r.ok);
    const succeeded = c?.succeeded ?? 0;
    const failed = c?.failed ?? 0;
    return {
      type,
      url: merchant[type],
      deliveries: c?.deliveries ?? 0,
      succeeded,
      failed,
      retrying: c?.retrying ?? 0,
      pending: c?.pending ?? 0,
      skipped: c?.skipped ?? 0,
      successRate: succeeded + failed > 0 ? succeeded / (succeeded + failed) : null,
      lastSuccessAt: success?.at ?? null,
      lastFailure: failure ? { at: failure.at, statusCode: failure.status_code, error: failure.error } : null,
    };
  });
  return { windowHours: HEALTH_WINDOW_HOURS, since: merchant.since, endpoints };
}
