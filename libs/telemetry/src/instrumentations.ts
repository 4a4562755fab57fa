import type { IncomingMessage } from 'node:http';
import { diag } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { envList } from './env-list';

// Probes and scrapes hit these every few seconds; a trace per probe would bury the real ones.
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** True for the probe and scrape paths, whose requests get no trace (nor a trace id in their log line). */
export function isProbePath(url: string): boolean {
  return UNTRACED_PATHS.has(url.split('?')[0] ?? '');
}

const isProbe = (req: IncomingMessage) => isProbePath(req.url ?? '');

// What an HTTP + AMQP + PostgreSQL service needs, each package required on its own rather than
// through @opentelemetry/auto-instrumentations-node, whose ~40 instrumentations (fs, dns, net,
// the runtime-metrics and framework ones) cost start-up time and memory in every process.
// Not amqplib: the relay's publish and callback-svc's delivery record their own spans, continued
// from the outbox row's and the message's traceparent; the library's spans beside them repeated
// them (two producer spans per message), at about a tenth of each process's CPU per message
// (profiles of a create load and of a drain, docs/decisions.md). Not pino: the logger's own mixin
// writes trace_id and span_id (logger.ts); the instrumentation repeated it (adding only
// trace_flags) and patched every child logger, one per request (no difference in CPU per create
// was measurable, 374 against 379 µs in the gateway: it goes as a duplicate, not for speed).
const CREATE = {
  http: () => new HttpInstrumentation({ ignoreIncomingRequestHook: isProbe }),
  undici: () => new UndiciInstrumentation(),
  // Without a parent span a query is a poll (outbox relay, readiness): keep it out of Jaeger.
  pg: () => new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
} satisfies Record<string, () => Instrumentation>;

export type InstrumentationName = keyof typeof CREATE;
const AVAILABLE = Object.keys(CREATE) as InstrumentationName[];

/** A comma-separated list of names; undefined when unset or empty (then it does not apply). */
function namesIn(value: string | undefined): string[] | undefined {
  const names = envList(value);
  return names.length > 0 ? names : undefined;
}

/**
 * Which of http, undici and pg to instrument: all three less those a service records itself
 * (`without`; callback-svc records each callback's HTTP attempt on its own delivery span), unless
 * the operator chooses with the variables auto-instrumentations-node defined:
 * `OTEL_NODE_ENABLED_INSTRUMENTATIONS` replaces that default list (`without` included) and
 * `OTEL_NODE_DISABLED_INSTRUMENTATIONS` removes names from the result. Both take the short names
 * (`http,pg`). Names other than these three cannot be enabled here (their packages are not
 * loaded): they are ignored, with a warning through OTEL_LOG_LEVEL's logger.
 */
export function instrumentationNames(
  without: readonly InstrumentationName[] = [],
  env: NodeJS.ProcessEnv = process.env,
): InstrumentationName[] {
  const enabled = namesIn(env.OTEL_NODE_ENABLED_INSTRUMENTATIONS);
  const disabled = namesIn(env.OTEL_NODE_DISABLED_INSTRUMENTATIONS) ?? [];
  const unknown = [...(enabled ?? []), ...disabled].filter((name) => !(AVAILABLE as string[]).includes(name));
  if (unknown.length > 0) diag.warn(`@dw/telemetry instruments only ${AVAILABLE.join(', ')}; ignoring ${unknown.join(', ')}`);
  return AVAILABLE.filter((name) => (enabled ? enabled.includes(name) : !without.includes(name)) && !disabled.includes(name));
}

/** These instrumentations, created (and so enabled: they patch modules required from now on). */
export function createInstrumentations(names: readonly InstrumentationName[]): Instrumentation[] {
  return names.map((name) => CREATE[name]());
}
