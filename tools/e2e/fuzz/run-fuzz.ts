/**
 * The fuzz run: N generated requests through the gateway, each answer checked against docs/api.md#errors
 * (no 5xx; every 4xx is application/problem+json with the request's id and, for
 * validation_failed, the offending fields), then every process's health.
 */
import type { Stack } from '../test/support/stack';
import { fuzzRequest, type FuzzContext, type FuzzRequest } from './requests';
import { createClient, type FuzzResponse } from './send';

export interface FuzzFinding {
  index: number;
  request: string;
  problem: string;
  status?: number;
  body?: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  seconds: number;
  byStatus: Record<string, number>;
  /** Per endpoint (and mode): requests and their summed latency, to see where the time goes. */
  byEndpoint: Record<string, { count: number; ms: number }>;
  fiveXx: number;
  findings: FuzzFinding[];
  findingCount: number;
}

/** Two merchants: one takes the writes, the other holds a few (hostile but valid) transactions to read. */
export async function prepareFuzz(stack: Stack, seed: number): Promise<FuzzContext> {
  const writer = stack.createMerchant('Fuzz writer');
  const reader = stack.createMerchant('Fuzz reader');
  const ids: string[] = [];
  const texts = ['plain', 'ok\u202eevil', '=HYPERLINK("http://x")', '<script>alert(1)</script>', '\u0085\u009b', '😀 中 ا', '"quoted, comma"'];
  for (const [i, text] of texts.entries()) {
    const withdraw = i % 2 === 1;
    const res = await fetch(`${stack.gateway}/api/${withdraw ? 'createWithdraw' : 'createDeposit'}`, {
      method: 'POST',
      headers: { serviceApiToken: reader.apiToken, 'content-type': 'application/json' },
      body: JSON.stringify({
        amount: `${i + 1}.50`,
        currency: 'USD',
        orderId: `${text}-${i}`,
        description: text,
        metadata: { [text.slice(0, 40) || 'k']: text },
        ...(withdraw ? { destination: text } : {}),
      }),
    });
    if (res.status !== 201) throw new Error(`setting up the reader's transactions failed: ${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { id: string }).id);
  }
  return { writerToken: writer.apiToken, readerToken: reader.apiToken, readerTransactionIds: ids, seed };
}

function describeRequest(req: FuzzRequest): string {
  const body = req.raw ?? req.body;
  const shown = body === undefined ? '' : ` body=${JSON.stringify(body.subarray(0, 300).toString('latin1'))}${body.length > 300 ? `…(${body.length} bytes)` : ''}`;
  return `${req.label}: ${req.method} ${JSON.stringify(req.path.slice(0, 300))} headers=${JSON.stringify(req.headers).slice(0, 300)}${shown}`;
}

/** Ajv's own wording, which names a keyword instead of what a field accepts (STYLE: 4xx bodies say what to fix). */
const AJV_WORDING = /must be equal to (constant|one of the allowed values)|must match (a schema in anyOf|exactly one schema|pattern "\^)|must NOT have|must have required property|must be [<>]=? ?\d|has an invalid format|The (body|querystring|params|headers|request) is not valid; see errors/;

/** What is wrong with this answer, or undefined when it keeps the contract. */
export function checkResponse(req: FuzzRequest, res: FuzzResponse): string | undefined {
  if (res.status >= 500) return `answered ${res.status}`;
  if (res.status < 400) return undefined;
  const type = res.headers['content-type'] ?? '';
  if (!type.startsWith('application/problem+json')) return `${res.status} with content-type ${JSON.stringify(type)}`;
  if (req.method === 'HEAD') return undefined; // no body to read
  let problem: { status?: unknown; code?: unknown; requestId?: unknown; errors?: unknown };
  try {
    problem = JSON.parse(res.body);
  } catch {
    return `${res.status} problem body is not JSON`;
  }
  if (problem.status !== res.status || typeof problem.code !== 'string') return `${res.status} problem without matching status and code`;
  if (problem.requestId !== res.headers['x-request-id']) return `${res.status} problem requestId differs from x-request-id`;
  if (problem.code === 'validation_failed' && (!Array.isArray(problem.errors) || problem.errors.length === 0)) {
    return '400 validation_failed without errors naming the field';
  }
  if (problem.code === 'validation_failed') {
    const texts = [(problem as { detail?: unknown }).detail, ...(problem.errors as { message?: unknown }[]).map((e) => e?.message)];
    const generic = texts.find((t) => typeof t !== 'string' || AJV_WORDING.test(t));
    if (generic !== undefined) return `400 validation_failed in Ajv's words, not what the field accepts: ${JSON.stringify(generic)}`;
  }
  return undefined;
}

export async function runFuzz(
  stack: Stack,
  ctx: FuzzContext,
  opts: { requests: number; concurrency?: number; maxFindings?: number; onProgress?: (done: number) => void },
): Promise<FuzzReport> {
  const client = createClient(stack.gateway, opts.concurrency ?? 8);
  const byStatus: Record<string, number> = {};
  const byEndpoint: Record<string, { count: number; ms: number }> = {};
  const findings: FuzzFinding[] = [];
  let findingCount = 0;
  let fiveXx = 0;
  let next = 0;
  const started = Date.now();
  const note = (f: FuzzFinding) => {
    findingCount++;
    if (findings.length < (opts.maxFindings ?? 25)) findings.push(f);
  };

  async function worker() {
    while (next < opts.requests) {
      const index = next++;
      const req = fuzzRequest(ctx, index);
      const sentAt = performance.now();
      const key = `${req.label.split(' ')[0]}${req.raw ? ' (raw)' : ''}`;
      try {
        const res = await client.send(req);
        byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
        if (res.status >= 500) fiveXx++;
        const problem = checkResponse(req, res);
        if (problem) note({ index, request: describeRequest(req), problem, status: res.status, body: res.body.slice(0, 400) });
      } catch (err) {
        byStatus.error = (byStatus.error ?? 0) + 1;
        note({ index, request: describeRequest(req), problem: `no answer: ${(err as Error).message}` });
      }
      const stat = (byEndpoint[key] ??= { count: 0, ms: 0 });
      stat.count++;
      stat.ms += performance.now() - sentAt;
      if (index % 1000 === 999) opts.onProgress?.(index + 1);
    }
  }
  try {
    await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  } finally {
    await client.close();
  }
  return {
    seed: ctx.seed,
    requests: opts.requests,
    seconds: (Date.now() - started) / 1000,
    byStatus,
    byEndpoint,
    fiveXx,
    findings,
    findingCount,
  };
}

/** Whether each of the four processes still answers /healthz after the run. */
export async function processesAlive(stack: Stack): Promise<Record<string, boolean>> {
  const result: Record<string, boolean> = {};
  for (const [name, port] of Object.entries(stack.ports)) {
    try {
      result[name] = (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
    } catch {
      result[name] = false;
    }
  }
  return result;
}

/**
 * Log lines that show a rule missed by the schemas even when the answer was right: errors (level
 * 50+) and database data errors caught only by the last line of defence (db-errors.ts).
 */
export function suspiciousLogLines(stack: Stack): string[] {
  return Object.entries(stack.logs).flatMap(([name, chunks]) =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => /"level":(50|60)|dependency error mapped to a problem/.test(line) && !/"status":503/.test(line))
      // A delivery that used up its attempts (the fuzz sets unreachable URLs) is logged as an error
      // by design once the 155 s schedule has run out; it says nothing about input handling.
      .filter((line) => !line.includes('"msg":"callback attempt failed; no attempts left'))
      .map((line) => `${name}: ${line.slice(0, 500)}`),
  );
}
