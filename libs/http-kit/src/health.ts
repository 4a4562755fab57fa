/**
 * /healthz (the process is alive), /readyz (every dependency this service needs answers) and
 * /metrics (Prometheus text). None of them needs a token. /metrics is left out when the service
 * serves it on METRICS_PORT instead (run-service.ts): in a deployment the gateway's public port
 * never shows it, while the probes keep /healthz and /readyz where they are.
 */
import { renderMetrics } from '@dw/telemetry';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { sendProblem } from './problem';

/** A dependency check: resolves when the dependency is reachable, rejects (or times out) when not. */
export type ReadinessCheck = () => Promise<unknown>;

/**
 * Each check's own bound: a dependency that black-holes packets would otherwise hold /readyz until
 * a driver or TCP gives up (a PostgreSQL query has 35 s, TCP minutes), and a probe that times out
 * is a failed probe anyway. Tested against a black-holed PostgreSQL in transactions-svc.
 */
const CHECK_TIMEOUT_MS = 2000;

async function runCheck(check: ReadinessCheck): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealthRoutes(app: FastifyInstance, checks: Record<string, ReadinessCheck>, opts = { metrics: true }): void {
  // `hide` keeps these out of the OpenAPI document (@fastify/swagger reads it).
  const hide = { schema: { hide: true } as FastifySchema };
  app.get('/healthz', hide, async () => ({ status: 'ok' }));

  app.get('/readyz', hide, async (request, reply) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((n) => runCheck(checks[n]!)));
    const down = names.filter((_, i) => !results[i]);
    if (down.length > 0) {
      return sendProblem(request, reply, 503, 'service_unavailable', `Not ready: ${down.join(', ')} unreachable.`);
    }
    return { status: 'ready', checks: Object.fromEntries(names.map((n) => [n, 'up'])) };
  });

  if (!opts.metrics) return;
  app.get('/metrics', hide, async (_request, reply) => {
    const { contentType, body } = await renderMetrics();
    return reply.type(contentType).send(body);
  });
}
