import { diag } from '@opentelemetry/api';
import { getNumberFromEnv, getStringFromEnv } from '@opentelemetry/core';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type BatchSpanProcessorOptions,
  type Sampler,
  type SpanLimits,
} from '@opentelemetry/sdk-trace';

// OpenTelemetry's trace SDK 3 reads no environment variables (2.x's sdk-trace-base did): these
// read the standard ones the operator may set, as 2.x did, so the chart's and the docs' settings
// keep their meaning.

/** OTEL_TRACES_SAMPLER(_ARG); undefined when unset (the caller picks its default). */
export function samplerFromEnv(): Sampler | undefined {
  const name = getStringFromEnv('OTEL_TRACES_SAMPLER');
  if (!name) return undefined;
  const ratio = (): number => {
    const arg = getNumberFromEnv('OTEL_TRACES_SAMPLER_ARG');
    return arg === undefined || arg < 0 || arg > 1 ? 1 : arg;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      diag.warn(`OTEL_TRACES_SAMPLER: "${name}" is not known; using parentbased_always_on`);
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** OTEL_SPAN_*_LIMIT and OTEL_ATTRIBUTE_*_LIMIT; only the ones set. */
export function spanLimitsFromEnv(): SpanLimits {
  const limits: SpanLimits = {
    attributeValueLengthLimit: getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? getNumberFromEnv('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'),
    attributeCountLimit: getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT') ?? getNumberFromEnv('OTEL_ATTRIBUTE_COUNT_LIMIT'),
    linkCountLimit: getNumberFromEnv('OTEL_SPAN_LINK_COUNT_LIMIT'),
    eventCountLimit: getNumberFromEnv('OTEL_SPAN_EVENT_COUNT_LIMIT'),
    attributePerEventCountLimit: getNumberFromEnv('OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT'),
    attributePerLinkCountLimit: getNumberFromEnv('OTEL_LINK_ATTRIBUTE_COUNT_LIMIT'),
  };
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) as SpanLimits;
}

/** OTEL_BSP_*; only the ones set. */
export function batchOptionsFromEnv(): Omit<BatchSpanProcessorOptions, 'exporter'> {
  const options = {
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}
