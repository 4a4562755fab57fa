// values.yaml against values.schema.json, as Helm validates them on lint, template and install.
import Ajv, { type ErrorObject } from 'ajv';
import { chartSchema, chartValues, isObject, mergeValues, readYaml, type Json, type JsonObject } from '../src/repo-files';

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validate = ajv.compile(chartSchema());
const defaults = chartValues();
const ciValues = readYaml('k8s/deposit-withdraw/ci/test-values.yaml');

function errorsFor(values: JsonObject): ErrorObject[] {
  return validate(values) ? [] : (validate.errors ?? []);
}

describe('values.schema.json', () => {
  it('is a draft-07 schema', () => {
    expect(chartSchema()['$schema']).toBe('http://json-schema.org/draft-07/schema#');
  });

  it('accepts values.yaml with the ci credentials', () => {
    expect(errorsFor(mergeValues(defaults, ciValues))).toEqual([]);
  });

  it('accepts values.yaml when secrets.existingSecret names a Secret', () => {
    expect(errorsFor(mergeValues(defaults, { secrets: { existingSecret: 'payments-creds' } }))).toEqual([]);
  });

  it('refuses values.yaml alone: credentials are neither given nor referenced', () => {
    const paths = errorsFor(defaults).map((e) => e.instancePath);
    expect(paths).toEqual(expect.arrayContaining(['/secrets/databaseUrl', '/secrets/amqpUrl', '/secrets/adminToken', '/secrets/internalAuthSecrets']));
  });

  it('refuses a misspelt key in a component block', () => {
    const errors = errorsFor(mergeValues(defaults, { ...ciValues, apiGateway: { replicas: 3 } }));
    expect(errors).toContainEqual(expect.objectContaining({ instancePath: '/apiGateway', keyword: 'additionalProperties' }));
  });

  it('refuses exposing transactions-svc (its /internal/* API) through a LoadBalancer Service', () => {
    const errors = errorsFor(mergeValues(defaults, { ...ciValues, transactionsSvc: { service: { type: 'LoadBalancer' } } }));
    expect(errors).toContainEqual(expect.objectContaining({ instancePath: '/transactionsSvc/service/type' }));
  });

  it('refuses a malformed callback retry schedule', () => {
    const errors = errorsFor(mergeValues(defaults, { ...ciValues, config: { callbackRetryDelaysMs: '5s,10s' } }));
    expect(errors).toContainEqual(expect.objectContaining({ instancePath: '/config/callbackRetryDelaysMs' }));
  });

  it('describes every value of values.yaml', () => {
    const undescribed: string[] = [];
    const walk = (value: Json, schema: JsonObject | undefined, path: string): void => {
      if (!schema || typeof schema['description'] !== 'string') undescribed.push(path);
      const props = schema?.['properties'];
      // Objects without declared properties (resources, selectors, securityContext) are Kubernetes
      // structures passed through whole; their inner keys are Kubernetes', not ours.
      if (!isObject(value) || !isObject(props) || schema?.['additionalProperties'] !== false) return;
      for (const [key, child] of Object.entries(value)) {
        const childSchema = props[key];
        walk(child, isObject(childSchema) ? childSchema : undefined, path ? `${path}.${key}` : key);
      }
    };
    for (const [key, value] of Object.entries(defaults)) {
      const props = chartSchema()['properties'];
      walk(value, isObject(props) && isObject(props[key]) ? props[key] : undefined, key);
    }
    expect(undescribed).toEqual([]);
  });
});

describe('production defaults of values.yaml', () => {
  it('keeps the sandbox settler off and private callback hosts refused', () => {
    expect(defaults['config']).toMatchObject({ sandboxSettleMs: 0, callbackAllowPrivateHosts: false });
  });

  it('runs every container as non-root with a read-only root filesystem and no capabilities', () => {
    expect(defaults['podSecurityContext']).toMatchObject({ runAsNonRoot: true });
    expect(defaults['containerSecurityContext']).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('keeps every internal Service ClusterIP and NetworkPolicies on', () => {
    for (const key of ['transactionsSvc', 'callbackSvc', 'ui']) {
      expect(defaults[key]).toMatchObject({ service: { type: 'ClusterIP' } });
    }
    expect(defaults['networkPolicy']).toMatchObject({ enabled: true, operatorPodLabels: {} });
  });
});
