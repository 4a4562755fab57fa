// values.schema.json is generated (src/chart-schema.ts): from values.yaml's `## @param` lines by
// @bitnami/readme-generator-for-helm, completed by values.schema.rules.json. Neither side may be
// edited without the other.
import { readFileSync } from 'node:fs';
import { chartSchemaRules, generateChartSchema, SCHEMA_FILE } from '../src/chart-schema';
import { isObject, type JsonObject } from '../src/repo-files';

const generated = generateChartSchema();
const schema = JSON.parse(generated) as JsonObject;

function nodeAt(dotted: string): JsonObject {
  let node: JsonObject = schema;
  for (const key of dotted.split('.')) {
    const props = node['properties'];
    if (!isObject(props) || !isObject(props[key])) throw new Error(`no schema for ${dotted}`);
    node = props[key];
  }
  return node;
}

describe('values.schema.json', () => {
  it('is what `npm run chart:schema` generates from values.yaml and values.schema.rules.json', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(generated);
  });

  it("takes each value's description from its `## @param` line and each block's from its `## @extra` line", () => {
    expect(nodeAt('config.callbackPrefetch')['description']).toBe(
      'Messages one callback-svc pod holds at once (in flight, or waiting for their merchant\'s slot)',
    );
    expect(nodeAt('probes.readiness')['description']).toBe('Readiness probe (GET /readyz) timing');
  });

  it('keeps a value passed through whole (`[object]`, `[array]`) open, with its real default', () => {
    expect(nodeAt('apiGateway.resources')).toMatchObject({
      type: 'object',
      default: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '384Mi' } },
    });
    expect(nodeAt('podSecurityContext')['additionalProperties']).toBeUndefined();
    expect(nodeAt('ingress.hosts')).toMatchObject({ type: 'array', default: [expect.objectContaining({ host: 'payments.example.com' })] });
  });

  it('turns OpenAPI `nullable` into a JSON Schema null type, which is what Helm validates', () => {
    expect(generated).not.toContain('"nullable"');
    expect(nodeAt('config.trustProxyHops')['type']).toEqual(['integer', 'null']);
  });

  it('applies a rule to every value its `*` pattern names, later rules winning', () => {
    for (const component of ['transactionsSvc', 'callbackSvc', 'ui']) {
      expect(nodeAt(`${component}.service.type`)['enum']).toEqual(['ClusterIP']);
    }
    expect(nodeAt('apiGateway.service.type')['enum']).toEqual(['ClusterIP', 'NodePort', 'LoadBalancer']);
    expect(nodeAt('probes.startup.periodSeconds')).toMatchObject({ type: 'integer', minimum: 1 });
    expect(nodeAt('probes.liveness.initialDelaySeconds')).toMatchObject({ type: 'integer', minimum: 0 });
  });

  it('refuses a rule that names no value of values.yaml, so the rules cannot outlive a value', () => {
    const rules = { ...chartSchemaRules(), 'config.callbackRetryDelays': { pattern: '^[0-9]+$' } };
    expect(() => generateChartSchema(rules)).toThrow('"config.callbackRetryDelays" names no value of values.yaml');
  });
});
