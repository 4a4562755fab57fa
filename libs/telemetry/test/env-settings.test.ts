import { W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { envDetector, hostDetector, processDetector } from '@opentelemetry/resources';
import { propagatorFromEnv } from '../src/propagators';
import { resourceDetectorsFromEnv } from '../src/resource';
import { serviceNameFor } from '../src/service-name';
import { tracesAreExported } from '../src/trace-export';

describe('when traces leave the process', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://jaeger:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
  ])('%j → %s', (env, expected) => {
    expect(tracesAreExported(env as NodeJS.ProcessEnv)).toBe(expected);
  });
});

describe('service name', () => {
  it('defaults to the name the app passes', () => {
    expect(serviceNameFor('api-gateway', {})).toBe('api-gateway');
  });
  it('yields to OTEL_SERVICE_NAME', () => {
    expect(serviceNameFor('api-gateway', { OTEL_SERVICE_NAME: 'gw-eu' })).toBe('gw-eu');
  });
  it('yields to service.name in OTEL_RESOURCE_ATTRIBUTES', () => {
    expect(serviceNameFor('api-gateway', { OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=gw' })).toBeUndefined();
    expect(serviceNameFor('api-gateway', { OTEL_RESOURCE_ATTRIBUTES: 'my.service.name.hint=x' })).toBe('api-gateway');
  });
});

describe('OTEL_PROPAGATORS', () => {
  const fieldsOf = (env: NodeJS.ProcessEnv) => {
    const propagator = propagatorFromEnv(env);
    return propagator ? propagator.fields().sort() : propagator;
  };
  it('unset or empty: the provider default (W3C tracecontext + baggage)', () => {
    expect(propagatorFromEnv({})).toBeUndefined();
    expect(propagatorFromEnv({ OTEL_PROPAGATORS: ' ' })).toBeUndefined();
  });
  it('one name: that propagator alone', () => {
    expect(propagatorFromEnv({ OTEL_PROPAGATORS: 'tracecontext' })).toBeInstanceOf(W3CTraceContextPropagator);
    expect(propagatorFromEnv({ OTEL_PROPAGATORS: 'baggage' })).toBeInstanceOf(W3CBaggagePropagator);
  });
  it('several: all of them, once each', () => {
    expect(fieldsOf({ OTEL_PROPAGATORS: 'baggage, tracecontext,baggage' })).toEqual(['baggage', 'traceparent', 'tracestate']);
  });
  it('none, or only names it does not support (b3, jaeger): no propagation at all', () => {
    expect(propagatorFromEnv({ OTEL_PROPAGATORS: 'tracecontext,none' })).toBeNull();
    expect(propagatorFromEnv({ OTEL_PROPAGATORS: 'b3' })).toBeNull();
    expect(fieldsOf({ OTEL_PROPAGATORS: 'b3,tracecontext' })).toEqual(['traceparent', 'tracestate']);
  });
});

describe('OTEL_NODE_RESOURCE_DETECTORS', () => {
  it('defaults to env, process and host, as NodeSDK did', () => {
    expect(resourceDetectorsFromEnv({})).toEqual([envDetector, processDetector, hostDetector]);
  });
  it('chooses among host, os, serviceinstance, process and env', () => {
    expect(resourceDetectorsFromEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'env' })).toEqual([envDetector]);
    expect(resourceDetectorsFromEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'all' })).toHaveLength(5);
    expect(resourceDetectorsFromEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'none' })).toEqual([]);
    expect(resourceDetectorsFromEnv({ OTEL_NODE_RESOURCE_DETECTORS: 'env,aws' })).toEqual([envDetector]);
  });
});
