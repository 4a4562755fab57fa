/**
 * Reads from transactions-svc's merchant-scoped endpoints over a keep-alive undici pool. Its
 * answers come back as data, errors included (they are passed through to the merchant); only an
 * unreachable or nonsensical upstream becomes a 503.
 */
import { StringDecoder } from 'node:string_decoder';
import {
  type EndpointHealth,
  type ExportRow,
  type Problem,
  type TransactionDetail,
  type TransactionPage,
} from '@dw/contracts';
import { serviceUnavailable, type InternalAuth } from '@dw/http-kit';
import { Pool } from 'undici';

export type UpstreamResult<T> = { ok: true; body: T } | { ok: false; status: number; problem: Problem };

export interface RequestScope {
  merchantId: string;
  requestId: string;
}

export type ListFilters = Record<string, string | number | undefined>;

export interface TransactionsClient {
  list(scope: RequestScope, filters: ListFilters): Promise<UpstreamResult<TransactionPage>>;
  get(scope: RequestScope, id: string): Promise<UpstreamResult<TransactionDetail>>;
  health(scope: RequestScope): Promise<UpstreamResult<EndpointHealth>>;
  /** Every transaction matching the filters, streamed row by row (never held in memory). */
  exportRows(scope: RequestScope, filters: ListFilters): Promise<UpstreamResult<AsyncIterable<ExportRow>>>;
  /** Readiness: resolves when transactions-svc's /healthz answers 200. */
  alive(): Promise<void>;
  close(): Promise<void>;
}

/**
 * NDJSON lines as objects, read only as fast as they are consumed (backpressure reaches
 * transactions-svc), holding one chunk's partial line at most.
 */
async function* ndjsonRows(body: AsyncIterable<Buffer>): AsyncGenerator<ExportRow> {
  const utf8 = new StringDecoder('utf8'); // a character split across two chunks stays whole
  let rest = '';
  for await (const chunk of body) {
    const lines = (rest + utf8.write(chunk)).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line) yield JSON.parse(line) as ExportRow;
  }
  rest += utf8.end();
  if (rest) yield JSON.parse(rest) as ExportRow;
}

const isProblem = (body: unknown): body is Problem =>
  typeof body === 'object' && body !== null && typeof (body as Problem).status === 'number' && 'code' in body;

/** `auth` proves each request to transactions-svc, which acts for a merchant only on that proof. */
export function transactionsClient(baseUrl: string, timeoutMs: number, auth: InternalAuth): TransactionsClient {
  const pool = new Pool(baseUrl, { connections: 32, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

  // The proof covers this very request: method, path with query, merchant and request id.
  const headers = (scope: RequestScope, path: string, accept = 'application/json') => ({
    accept,
    ...auth.headers({ method: 'GET', path, merchantId: scope.merchantId, requestId: scope.requestId }),
  });

  const search = (filters: ListFilters) => {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filters)) if (value !== undefined) query.set(key, String(value));
    return query.toString();
  };

  async function getJson<T>(path: string, scope: RequestScope): Promise<UpstreamResult<T>> {
    let statusCode: number;
    let body: unknown;
    try {
      const res = await pool.request({
        method: 'GET',
        path,
        headers: headers(scope, path),
      });
      statusCode = res.statusCode;
      body = await res.body.json().catch(() => undefined);
    } catch {
      throw serviceUnavailable();
    }
    if (statusCode === 200 && typeof body === 'object' && body !== null) return { ok: true, body: body as T };
    if (statusCode >= 400 && isProblem(body)) return { ok: false, status: statusCode, problem: body };
    throw serviceUnavailable();
  }

  return {
    list(scope, filters) {
      return getJson<TransactionPage>(`/api/transactions?${search(filters)}`, scope);
    },
    health(scope) {
      return getJson<EndpointHealth>('/api/endpoint-health', scope);
    },
    async exportRows(scope, filters) {
      let res: Awaited<ReturnType<Pool['request']>>;
      try {
        // No body timeout: a large export streams for longer than one page takes.
        const path = `/api/transactions/export?${search(filters)}`;
        res = await pool.request({ method: 'GET', path, headers: headers(scope, path, 'application/x-ndjson'), bodyTimeout: 0 });
      } catch {
        throw serviceUnavailable();
      }
      if (res.statusCode !== 200) {
        const body: unknown = await res.body.json().catch(() => undefined);
        if (res.statusCode >= 400 && isProblem(body)) return { ok: false, status: res.statusCode, problem: body };
        throw serviceUnavailable();
      }
      return { ok: true, body: ndjsonRows(res.body) };
    },
    get(scope, id) {
      return getJson<TransactionDetail>(`/api/transactions/${encodeURIComponent(id)}`, scope);
    },
    async alive() {
      const res = await pool.request({ method: 'GET', path: '/healthz', headersTimeout: 1500, bodyTimeout: 1500 });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`transactions-svc /healthz answered ${res.statusCode}`);
    },
    close: () => pool.close(),
  };
}
