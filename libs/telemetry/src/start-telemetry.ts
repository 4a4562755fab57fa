import { NodeSDK } from '@opentelemetry/sdk-node';
import { serviceInstrumentations } from './instrumentations';
import { serviceNameFor } from './service-name';
import { traceExportConfig } from './trace-export';

// The preload script and the app are bundled separately, so each bundle has its own copy of this
// module; the SDK handle lives on the process so that either copy can see it and stop it.
const STATE_KEY = Symbol.for('dw.telemetry.state');
type State = { sdk: NodeSDK; stopped?: Promise<void> };
const holder = globalThis as { [STATE_KEY]?: State };

/**
 * Starts OpenTelemetry for this process: auto-instrumentation of http, undici, pg and pino (RabbitMQ
 * publishes and deliveries record their own spans), W3C trace-context + baggage propagation (unless
 * OTEL_PROPAGATORS says otherwise), and OTLP/HTTP export only when an OTLP endpoint is configured. Call it before anything else is
 * required (the app's preloaded `instrumentation.ts`). A second call does nothing.
 * OTEL_SDK_DISABLED=true turns all of it off.
 */
export function startTelemetry(serviceName: string): void {
  if (holder[STATE_KEY]) return;
  const sdk = new NodeSDK({
    serviceName: serviceNameFor(serviceName),
    instrumentations: serviceInstrumentations(),
    ...traceExportConfig(),
    // Metrics are Prometheus via prom-client and logs are JSON on stdout: without these empty
    // lists the SDK would build OTLP metric and log exporters that push to localhost.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  holder[STATE_KEY] = { sdk };
}

/**
 * Flushes buffered spans and stops the SDK. Apps call it on SIGTERM after closing their servers
 * and consumers, so the spans of the last requests still reach the collector. Safe to call when
 * telemetry was never started, and more than once.
 */
export async function shutdownTelemetry(): Promise<void> {
  const state = holder[STATE_KEY];
  if (!state) return;
  state.stopped ??= state.sdk.shutdown();
  await state.stopped;
}
