/**
 * Starts a built service and stops it gracefully: on SIGTERM/SIGINT the server stops taking new
 * requests, finishes the ones in flight, runs the service's own close hooks (consumers hand back
 * unacked messages), flushes telemetry and exits 0.
 */
import http from 'node:http';
import { HEADER_REQUEST_ID, PROBLEM_CONTENT_TYPE, type ProblemCode } from '@dw/contracts';
import { renderMetrics, shutdownTelemetry } from '@dw/telemetry';
import closeWithGrace from 'close-with-grace';
import listenReasons from './listen-reasons.json';
import { problemClientErrorHandler } from './client-error';
import { problemBody } from './problem';
import { genReqId } from './request-id';
import type { FastifyInstance } from 'fastify';

export interface RunOptions {
  app: FastifyInstance;
  port: number;
  host: string;
  shutdownTimeoutMs: number;
  /**
   * When set (>0), /metrics is served alone on this port (METRICS_PORT), for Prometheus; the app
   * must then have been built with the same metricsPort (createService), which leaves it off its own port.
   */
  metricsPort?: number;
}

/**
 * A listener that answers GET /metrics and nothing else, so monitoring can be allowed this port
 * without reaching the service's API (k8s NetworkPolicy).
 */
function metricsServer(): http.Server {
  const server = http.createServer((req, res) => {
    // Like every answer of the service: its request id, never stored or sniffed, a refusal problem+json.
    const requestId = genReqId(req);
    const headers = { [HEADER_REQUEST_ID]: requestId, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
    const problem = (status: number, code: ProblemCode, detail: string) =>
      res.writeHead(status, { ...headers, 'content-type': PROBLEM_CONTENT_TYPE }).end(JSON.stringify(problemBody(requestId, status, code, detail)));
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      problem(404, 'not_found', 'This port serves GET /metrics only (METRICS_PORT).');
      return;
    }
    renderMetrics().then(
      ({ contentType, body }) => res.writeHead(200, { ...headers, 'content-type': contentType }).end(body),
      () => problem(500, 'internal', 'The metrics could not be rendered.'),
    );
  });
  // A request the parser refuses gets the service's own 400 problem, not Node's bare one.
  server.on('clientError', problemClientErrorHandler);
  return server;
}

/** A service that could not take its port, told in one line rather than a stack trace. */
export class ListenError extends Error {}

const LISTEN_REASONS: Record<string, string | undefined> = listenReasons;

/** Listens, or rejects with a ListenError naming the address when the reason is one a person can act on. */
async function listenOn(host: string, port: number, listen: () => Promise<unknown>, what = ''): Promise<void> {
  try {
    await listen();
  } catch (err) {
    const reason = LISTEN_REASONS[(err as NodeJS.ErrnoException).code ?? ''];
    if (!reason) throw err;
    throw new ListenError(`cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}${what}: ${reason}`);
  }
}

export async function runService({ app, port, host, shutdownTimeoutMs, metricsPort }: RunOptions): Promise<void> {
  const metrics = metricsPort ? metricsServer() : undefined;
  closeWithGrace({ delay: shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    metrics?.close();
    await app.close();
    await shutdownTelemetry();
  });
  if (metrics) {
    const listen = () => new Promise<void>((resolve, reject) => metrics.once('error', reject).listen(metricsPort, host, resolve));
    await listenOn(host, metricsPort!, listen, ' (METRICS_PORT)');
  }
  await listenOn(host, port, () => app.listen({ port, host }));
}

/** An error class whose message alone tells a person what to fix (a ListenError; @dw/config's ConfigError). */
type ToldInOneLine = abstract new (...args: never[]) => Error;

/**
 * Runs a service's main and exits 1 when it fails to start: a ListenError, or an error of one of
 * `toldInOneLine`, prints its message alone; anything else prints its stack, which is a bug's report.
 */
export function runMain(main: () => Promise<void>, toldInOneLine: ToldInOneLine[] = []): void {
  main().catch((err: unknown) => {
    const forAPerson = [ListenError, ...toldInOneLine].some((told) => err instanceof told);
    console.error(forAPerson ? (err as Error).message : err);
    process.exit(1);
  });
}
