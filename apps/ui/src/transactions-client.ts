/**
 * Reads from transactions-svc's merchant-scoped endpoints over a keep-alive undici pool. Its
 * answers come back as data, errors included (they are passed through to the merchant); only an
 * unreachable or nonsensical upstream becomes a 503.
 */
import {
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
  /** Readiness: resolves when transactions-svc's /healthz answers 200. */
  alive(): Promise<void>;
  close(): Promise<void>;
}

const isProblem = (body: unknown): body is Problem =>
  typeof body === 'object' && body !== null && typeof (body as Problem).status === 'number' && 'code' in body;

/** `auth` proves each request to transactions-svc, which acts for a merchant only on that proof. */
export function transactionsClient(baseUrl: string, timeoutMs: number, auth: InternalAuth): TransactionsClient {
  const pool = new Pool(baseUrl, { connections: 32, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

  async function getJson<T>(path: string, scope: RequestScope): Promise<UpstreamResult<T>> {
    let statusCode: number;
    let body: unknown;
    try {
      const res = await pool.request({
        method: 'GET',
        path,
        headers: {
          accept: 'application/json',
          ...auth.headers({ method: 'GET', path, merchantId: scope.merchantId, requestId: scope.requestId }),
        },
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
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(filters)) if (value !== undefined) query.set(key, String(value));
      return getJson<TransactionPage>(`/api/transactions?${query.toString()}`, scope);
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
