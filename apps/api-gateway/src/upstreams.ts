/** Keep-alive undici pools to the services the gateway forwards to. */
import { serviceUnavailable, unexpectedAnswer, withHeadersDeadline, type InternalAuth } from '@dw/http-kit';
import { injectTraceHeaders } from '@dw/telemetry';
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { sameDigest, type TokenLookup } from './auth/token-resolver';

export interface Upstream {
  url: string;
  pool: Pool;
}

/** Connections of each upstream pool (merchant-concurrency.ts shares them out). */
export const UPSTREAM_CONNECTIONS = 64;

/**
 * `timeoutMs` (UPSTREAM_TIMEOUT_MS) bounds each request until its answer's headers, the wait for one
 * of the 64 connections included (withHeadersDeadline), and each silence of a body that is read;
 * a body the client stopped reading is cut off by the gateway's connection stall timeout.
 */
export function upstream(url: string, timeoutMs: number): Upstream {
  return {
    url,
    pool: withHeadersDeadline(
      new Pool(url, { connections: UPSTREAM_CONNECTIONS, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
      timeoutMs,
    ),
  };
}

const RESOLVE_PATH = '/internal/auth/resolve';

/**
 * Asks transactions-svc which merchant holds a token hash, with the gateway's proof (resolution
 * answers no one else); a lost upstream is a 503, never a 401.
 */
export function tokenLookupVia(transactions: Upstream, auth: InternalAuth): TokenLookup {
  return async (tokenHash) => {
    let res;
    try {
      const body = JSON.stringify({ tokenHash });
      const proof = auth.headers({ method: 'POST', path: RESOLVE_PATH, merchantId: '', requestId: randomUUID(), body });
      // The lookup belongs to the trace of the request that needed it (the gateway writes its trace
      // context itself: no undici instrumentation here).
      const headers: Record<string, string> = { 'content-type': 'application/json', ...proof };
      injectTraceHeaders(headers);
      res = await transactions.pool.request({
        method: 'POST',
        path: RESOLVE_PATH,
        headers,
        body,
      });
    } catch (err) {
      throw serviceUnavailable(undefined, err);
    }
    const body = (await res.body.json().catch(() => undefined)) as { merchantId?: string; tokenHash?: string } | undefined;
    if (res.statusCode === 404) return undefined;
    if (res.statusCode !== 200 || typeof body?.merchantId !== 'string') {
      throw serviceUnavailable(undefined, unexpectedAnswer('transactions-svc', res.statusCode, 'no merchant for the token lookup'));
    }
    // The store matched the hash through its unique index; confirm in constant time that the answer is for this hash.
    if (typeof body.tokenHash !== 'string' || !sameDigest(body.tokenHash, tokenHash)) return undefined;
    return body.merchantId;
  };
}

/** Readiness: the upstream's /healthz answers 200. */
export async function upstreamAlive(up: Upstream): Promise<void> {
  const res = await up.pool.request({ method: 'GET', path: '/healthz', headersTimeout: 1500, bodyTimeout: 1500 });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`${up.url} answered ${res.statusCode}`);
}
