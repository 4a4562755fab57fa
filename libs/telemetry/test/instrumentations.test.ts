import { serviceInstrumentations } from '../src/instrumentations';

// Builds the list the way startTelemetry does, then switches each one off again so this test
// file's own modules stay unpatched.
function namesWith(env: Record<string, string>, without: Parameters<typeof serviceInstrumentations>[0] = []): string[] {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const list = serviceInstrumentations(without);
    list.forEach((i) => i.disable());
    return list.map((i) => i.instrumentationName.replace('@opentelemetry/instrumentation-', '')).sort();
  } finally {
    for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
  }
}

describe('which libraries are auto-instrumented', () => {
  it('is http, undici, pg, amqplib and pino only: no fs, dns, net or framework noise', () => {
    expect(namesWith({})).toEqual(['amqplib', 'http', 'pg', 'pino', 'undici']);
  });

  it('leaves out what a service records its own spans for (callback-svc: amqplib)', () => {
    expect(namesWith({}, ['amqplib'])).toEqual(['http', 'pg', 'pino', 'undici']);
  });

  it('leaves the environment as it found it', () => {
    namesWith({});
    expect(process.env.OTEL_NODE_ENABLED_INSTRUMENTATIONS).toBeUndefined();
  });

  it('still lets the operator choose with OTEL_NODE_DISABLED_INSTRUMENTATIONS / _ENABLED_', () => {
    expect(namesWith({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pino' })).toEqual(['amqplib', 'http', 'pg', 'undici']);
    expect(namesWith({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'http,dns' })).toEqual(['dns', 'http']);
  });
});
