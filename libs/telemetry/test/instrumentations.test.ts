import { createInstrumentations, instrumentationNames } from '../src/instrumentations';

// Builds the list the way startTelemetry does when spans are recorded, then switches each one off
// again so this test file's own modules stay unpatched.
function namesWith(env: Record<string, string>): string[] {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const list = createInstrumentations(instrumentationNames());
    list.forEach((i) => i.disable());
    return list.map((i) => i.instrumentationName.replace('@opentelemetry/instrumentation-', '')).sort();
  } finally {
    for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
  }
}

describe('which libraries are auto-instrumented', () => {
  it('is http, undici and pg only: no fs, dns, net, framework noise, nor amqplib (the services record their own publish and delivery spans), nor pino (the logger writes trace_id and span_id itself)', () => {
    expect(namesWith({})).toEqual(['http', 'pg', 'undici']);
  });

  it('leaves the environment as it found it', () => {
    namesWith({});
    expect(process.env.OTEL_NODE_ENABLED_INSTRUMENTATIONS).toBeUndefined();
  });

  it('still lets the operator choose with OTEL_NODE_DISABLED_INSTRUMENTATIONS / _ENABLED_', () => {
    expect(namesWith({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg' })).toEqual(['http', 'undici']);
    expect(namesWith({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http,pg' })).toEqual(['http', 'pg']);
  });

  it('ignores names other than the three (their packages are not loaded)', () => {
    expect(namesWith({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http, dns' })).toEqual(['http']);
    expect(namesWith({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'fs,amqplib,pino' })).toEqual(['http', 'pg', 'undici']);
  });

  it('leaves out what the service records itself, unless the operator lists it', () => {
    expect(instrumentationNames(['undici'], {})).toEqual(['http', 'pg']);
    expect(instrumentationNames(['undici'], { OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg' })).toEqual(['http']);
    expect(instrumentationNames(['undici'], { OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http,undici' })).toEqual(['http', 'undici']);
    expect(instrumentationNames([], { OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http,pg', OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg' })).toEqual(['http']);
  });
});
