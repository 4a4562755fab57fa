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
