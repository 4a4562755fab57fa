/**
 * Reads from transactions-svc's merchant-scoped endpoints over a keep-alive undici pool. Its
 * answers come back as data, errors included (they are passed through to the merchant); only an
 * unreachable or nonsensical upstream becomes a 503.
 */
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import {
  type BalanceHistoryPage,
  type BalanceList,
  type EndpointHealth,
  type ExportRow,
  type Problem,
  type TransactionDetail,
  type TransactionPage,
} from '@dw/contracts';
import { serviceUnavailable, unexpectedAnswer, withHeadersDeadline, type InternalAuth } from '@dw/http-kit';
import { Pool } from 'undici';

/** Named in the log line of a 503 (the problem handler's 'upstream unavailable'). */
const UPSTREAM = 'transactions-svc';

/** A problem from transactions-svc, with its Retry-After (a 429's) when it sent one. */
export type UpstreamResult<T> = { ok: true; body: T } | { ok: false; status: number; problem: Problem; retryAfter?: string };

export interface RequestScope {
  merchantId: string;
  requestId: string;
}

export type ListFilters = Record<string, string | number | undefined>;

export interface TransactionsClient {
  list(scope: RequestScope, filters: ListFilters): Promise<UpstreamResult<TransactionPage>>;
  get(scope: RequestScope, id: string): Promise<UpstreamResult<TransactionDetail>>;
  /**
   * The same answers as list and get, as the JSON bytes transactions-svc wrote (for a merchant who
   * asked for JSON): read whole, so the connection is free at once as for the parsed ones, but
   * never parsed nor written again. A page of 100 of the largest transactions is 4.25 MB, and its
   * parse and re-serialisation took about 100 ms of the ui's one thread (docs/decisions.md).
   */
  listBytes(scope: RequestScope, filters: ListFilters): Promise<UpstreamResult<Buffer>>;
  getBytes(scope: RequestScope, id: string): Promise<UpstreamResult<Buffer>>;
  health(scope: RequestScope): Promise<UpstreamResult<EndpointHealth>>;
  /**
   * Every transaction matching the filters, streamed row by row (never held in memory), as an
   * object stream of ExportRow. Destroy it to give up early: that destroys the upstream body too.
   */
  exportRows(scope: RequestScope, filters: ListFilters): Promise<UpstreamResult<Readable>>;
  /** The merchant's balance per currency (transactions-svc's GET /api/getBalance). */
  balances(scope: RequestScope): Promise<UpstreamResult<BalanceList>>;
  /** One page of the merchant's ledger entries, newest first (GET /api/getBalanceHistory). */
  balanceHistory(scope: RequestScope, filters: ListFilters): Promise<UpstreamResult<BalanceHistoryPage>>;
  /** Readiness: resolves when transactions-svc's /healthz answers 200. */
  alive(): Promise<void>;
  close(): Promise<void>;
}

/**
 * NDJSON lines as objects, read only as fast as they are consumed (backpressure reaches
 * transactions-svc), holding one chunk's partial line at most. A Transform, not an async
 * generator: Duplex.from(generator) cannot be destroyed while the generator awaits its next
 * chunk (its destroy waits for the generator), and so held the upstream connection of a merchant
 * who left while transactions-svc was between chunks.
 */
class NdjsonRows extends Transform {
  private readonly utf8 = new StringDecoder('utf8'); // a character split across two chunks stays whole
  private rest = '';

  constructor() {
    // One parsed row waiting at most (a row may be 48 KB): what a slow reader makes the ui hold stays small.
    super({ readableObjectMode: true, readableHighWaterMark: 1 });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const lines = (this.rest + this.utf8.write(chunk)).split('\n');
    this.rest = lines.pop()!;
    this.pushLines(lines, done);
  }

  override _flush(done: TransformCallback): void {
    this.pushLines([this.rest + this.utf8.end()], done);
  }

  private pushLines(lines: string[], done: TransformCallback): void {
    try {
      for (const line of lines) if (line) this.push(JSON.parse(line) as ExportRow);
    } catch (err) {
      return done(err as Error);
    }
    done();
  }
}

/**
 * The rows as a stream joined to the body by pipeline: destroying the rows (the merchant went
 * away) destroys the body, which frees its pooled connection, even when no row was read yet.
 */
function ndjsonRows(body: Readable): Readable {
  // Errors travel to the rows stream itself, where its reader sees them.
  return pipeline(body, new NdjsonRows(), () => undefined);
}

function parse(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** `{` … `}` around optional whitespace: what transactions-svc's serialiser writes, checked without a parse. */
function isJsonObject(bytes: Buffer): boolean {
  let start = 0;
  let end = bytes.length - 1;
  while (isSpace(bytes[start])) start++;
  while (end > start && isSpace(bytes[end])) end--;
  return bytes[start] === 0x7b && bytes[end] === 0x7d && end > start;
}

const isProblem = (body: unknown): body is Problem =>
  typeof body === 'object' && body !== null && typeof (body as Problem).status === 'number' && 'code' in body;

/**
 * The export's longest silence between two chunks of its body. Not a total timeout: a large
 * export streams for minutes. While the merchant reads slowly, undici pauses the body and this
 * clock with it; it fires only when transactions-svc itself stalls, and frees the connection. A
 * merchant who stops reading altogether is cut off by the ui's own connection stall timeout
 * (CLIENT_STALL_TIMEOUT_MS), which destroys the CSV stream and, through the pipeline, this body.
 */
export const EXPORT_IDLE_TIMEOUT_MS = 30_000;

/** `auth` proves each request to transactions-svc, which acts for a merchant only on that proof. */
export function transactionsClient(
  baseUrl: string,
  timeoutMs: number,
  auth: InternalAuth,
  exportIdleTimeoutMs = EXPORT_IDLE_TIMEOUT_MS,
): TransactionsClient {
  // Each request has `timeoutMs` to get its answer's headers, waiting for one of the 32 connections included.
  const pool = withHeadersDeadline(
    new Pool(baseUrl, { connections: 32, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
    timeoutMs,
  );

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

  /**
   * A 200's body as bytes, framed as a JSON object (a body that is not, or was cut short, is a
   * nonsensical upstream: 503); any other answer as the problem it carries.
   */
  async function getBytes(path: string, scope: RequestScope): Promise<UpstreamResult<Buffer>> {
    let statusCode: number;
    let bytes: Buffer;
    try {
      const res = await pool.request({ method: 'GET', path, headers: headers(scope, path) });
      statusCode = res.statusCode;
      bytes = Buffer.from(await res.body.arrayBuffer());
    } catch (err) {
      throw serviceUnavailable(undefined, err);
    }
    if (statusCode === 200 && isJsonObject(bytes)) return { ok: true, body: bytes };
    if (statusCode >= 400) {
      const body = parse(bytes);
      if (isProblem(body)) return { ok: false, status: statusCode, problem: body };
    }
    throw serviceUnavailable(undefined, unexpectedAnswer(UPSTREAM, statusCode, 'not a JSON object or a problem'));
  }

  async function getJson<T>(path: string, scope: RequestScope): Promise<UpstreamResult<T>> {
    const result = await getBytes(path, scope);
    if (!result.ok) return result;
    const body = parse(result.body);
    if (typeof body !== 'object' || body === null) throw serviceUnavailable(undefined, unexpectedAnswer(UPSTREAM, 200, 'not a JSON object'));
    return { ok: true, body: body as T };
  }

  const listPath = (filters: ListFilters) => `/api/transactions?${search(filters)}`;
  const getPath = (id: string) => `/api/transactions/${encodeURIComponent(id)}`;

  return {
    list(scope, filters) {
      return getJson<TransactionPage>(listPath(filters), scope);
    },
    listBytes(scope, filters) {
      return getBytes(listPath(filters), scope);
    },
    health(scope) {
      return getJson<EndpointHealth>('/api/endpoint-health', scope);
    },
    async exportRows(scope, filters) {
      let res: Awaited<ReturnType<Pool['request']>>;
      try {
        const path = `/api/transactions/export?${search(filters)}`;
        const accept = 'application/x-ndjson';
        res = await pool.request({ method: 'GET', path, headers: headers(scope, path, accept), bodyTimeout: exportIdleTimeoutMs });
      } catch (err) {
        throw serviceUnavailable(undefined, err);
      }
      if (res.statusCode !== 200) {
        const body: unknown = await res.body.json().catch(() => undefined);
        const retryAfter = res.headers['retry-after'];
        if (res.statusCode >= 400 && isProblem(body)) {
          return { ok: false, status: res.statusCode, problem: body, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) };
        }
        throw serviceUnavailable(undefined, unexpectedAnswer(UPSTREAM, res.statusCode, 'not a problem'));
      }
      return { ok: true, body: ndjsonRows(res.body) };
    },
    get(scope, id) {
      return getJson<TransactionDetail>(getPath(id), scope);
    },
    getBytes(scope, id) {
      return getBytes(getPath(id), scope);
    },
    balances(scope) {
      return getJson<BalanceList>('/api/getBalance', scope);
    },
    balanceHistory(scope, filters) {
      return getJson<BalanceHistoryPage>(`/api/getBalanceHistory?${search(filters)}`, scope);
    },
    async alive() {
      const res = await pool.request({ method: 'GET', path: '/healthz', headersTimeout: 1500, bodyTimeout: 1500 });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`transactions-svc /healthz answered ${res.statusCode}`);
    },
    close: () => pool.close(),
  };
}
