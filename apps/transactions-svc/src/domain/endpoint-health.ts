/**
 * Endpoint health for one merchant: per callback URL (deposit, withdraw), the deliveries of the
 * events created in the last 24 hours, at most the newest HEALTH_MAX_EVENTS of them. The 24 h window
 * alone did not bound the read: a merchant with 300,000 transactions that day made it walk 600,000
 * events, join each delivery and attempt and sort them on disk (1.3 s). Now the events come from a
 * backward walk of (merchant_id, created_at) that stops after HEALTH_MAX_EVENTS, their deliveries by
 * primary key and their attempts through (event_id, attempt): the same pages for a million events
 * as for a thousand (tools/e2e/test/flat-cost.e2e.test.ts).
 */
import {
  HEALTH_MAX_EVENTS,
  HEALTH_WINDOW_HOURS,
  TRANSACTION_TYPES,
  type EndpointHealth,
  type EndpointHealthItem,
} from '@dw/contracts';
import type pg from 'pg';
import { query, raw, sql, type Sql } from '@dw/db';
import { acknowledged, endedAt, iso } from './transaction-sql';

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

interface HealthRow {
  sampled: number;
  oldest: string | null;
  counts: CountRow[] | null;
  last: LastRow[] | null;
}

/** The statement behind endpointHealth, for a window starting at `since` (an ISO time). */
export function endpointHealthSql(merchantId: string, since: string): Sql {
  return sql`
    WITH sample AS MATERIALIZED (
      SELECT e.id, split_part(e.type, '.', 1) AS kind, e.created_at
        FROM transaction_events e
       WHERE e.merchant_id = ${merchantId}::uuid AND e.created_at >= ${since}::timestamptz
       ORDER BY e.created_at DESC
       LIMIT ${HEALTH_MAX_EVENTS}
    ),
    counts AS (
      SELECT s.kind,
             count(*)::int AS deliveries,
             count(*) FILTER (WHERE d.status = 'succeeded')::int AS succeeded,
             count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
             count(*) FILTER (WHERE d.status = 'retrying')::int AS retrying,
             count(*) FILTER (WHERE d.status = 'pending' OR d.status IS NULL)::int AS pending,
             count(*) FILTER (WHERE d.status = 'skipped')::int AS skipped
        FROM sample s LEFT JOIN callback_deliveries d ON d.event_id = s.id
       GROUP BY 1
    ),
    -- The newest successful and the newest failed attempt per type, among the counted events: a
    -- success dated when its 200 arrived, a failure when it was made (as the attempts list has it).
    last AS (
      SELECT DISTINCT ON (kind, ok) kind, ok, ${raw(iso('CASE WHEN ok THEN ended_at ELSE at END'))} AS at, status_code, error
        FROM (SELECT s.kind, COALESCE(${raw(acknowledged('a'))}, false) AS ok, a.at, ${raw(endedAt('a'))} AS ended_at, a.status_code, a.error
                FROM sample s JOIN callback_attempts a ON a.event_id = s.id) x
       ORDER BY kind, ok, x.at DESC
    )
    SELECT (SELECT count(*)::int FROM sample) AS sampled,
           (SELECT ${raw(iso('min(created_at)'))} FROM sample) AS oldest,
           (SELECT json_agg(counts) FROM counts) AS counts,
           (SELECT json_agg(last) FROM last) AS last`;
}

export async function endpointHealth(db: pg.Pool, merchantId: string): Promise<EndpointHealth | undefined> {
  const urls = sql`
    SELECT deposit_callback_url AS deposit, withdraw_callback_url AS withdraw,
           ${raw(iso(`(now() - make_interval(hours => ${HEALTH_WINDOW_HOURS}))`))} AS since
      FROM merchants WHERE id = ${merchantId}::uuid`;
  const [merchant] = await query<{ deposit: string | null; withdraw: string | null; since: string }>(db, urls);
  if (!merchant) return undefined;

  const [row] = await query<HealthRow>(db, endpointHealthSql(merchantId, merchant.since));
  const counts = row?.counts ?? [];
  const last = row?.last ?? [];
  // Capped: the count starts at the oldest event it holds, which the response says.
  const since = row && row.sampled >= HEALTH_MAX_EVENTS && row.oldest ? row.oldest : merchant.since;

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
  return { windowHours: HEALTH_WINDOW_HOURS, since, endpoints };
}
