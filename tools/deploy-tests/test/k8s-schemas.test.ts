// Every object the chart renders, for the example values (ci/test-values.yaml: the SRE pack on),
// the install docs/deploy.md documents (an existingSecret) and the optional parts (an in-release
// Redis, monitoring off), checked against Kubernetes' own OpenAPI schemas (kubernetes-models 5.1.0)
// and prometheus-operator's CRDs (@kubernetes-models/prometheus-operator 6.0.0). helm lint checks
// the templates; only this catches a field Kubernetes would refuse (a string replica count, a
// misspelt probe key) before a cluster does.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { renderChart, type Manifest } from '../src/helm';

const CI_VALUES = 'k8s/deposit-withdraw/ci/test-values.yaml';
const DOCUMENTED = {
  image: { repository: 'registry.example.com/deposit-withdraw', tag: '0.1.0' },
  secrets: { existingSecret: 'deposit-withdraw-creds' },
};

function problems(manifests: Manifest[]): string[] {
  const run = spawnSync(process.execPath, [path.join(__dirname, '../src/validate-objects.mjs')], {
    input: JSON.stringify(manifests),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as string[];
}

describe('every rendered object is valid against the Kubernetes schemas', () => {
  it.each([
    ['the example values (SRE pack on)', {}, [CI_VALUES]],
    ['the documented install (existingSecret)', DOCUMENTED, []],
    ['with an in-release Redis', { ...DOCUMENTED, redis: { enabled: true } }, []],
  ] as const)('%s', (_name, values, files) => {
    const manifests = renderChart(values, [...files]);
    expect(manifests.length).toBeGreaterThan(10);
    expect(problems(manifests)).toEqual([]);
  });

  it('and the check can fail: a Deployment with a string replica count is refused', () => {
    const manifests = renderChart({}, [CI_VALUES]);
    const deployment = manifests.find((m) => m.kind === 'Deployment')!;
    deployment.spec.replicas = 'two';
    expect(problems([deployment])).toEqual([expect.stringContaining('replicas must be integer')]);
  });
});
