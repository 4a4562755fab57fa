// Validates Kubernetes objects (a JSON array on stdin) against the Kubernetes API's own OpenAPI
// schemas as packaged by kubernetes-models, and prometheus-operator's CRD schemas by
// @kubernetes-models/prometheus-operator. Prints a JSON array of problems (empty when all pass).
// A plain Node script because both packages are ES modules only, which Jest's CommonJS runtime
// cannot load; k8s-schemas.test.ts runs it with the repository's Node.
const MODELS = {
  'v1': 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'batch/v1': 'kubernetes-models/batch/v1',
  'autoscaling/v2': 'kubernetes-models/autoscaling/v2',
  'policy/v1': 'kubernetes-models/policy/v1',
  'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
  'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
};

let input = '';
for await (const chunk of process.stdin) input += chunk;
const problems = [];
for (const object of JSON.parse(input)) {
  const where = `${object.apiVersion} ${object.kind} ${object.metadata?.name}`;
  const module = MODELS[object.apiVersion];
  const Model = module && (await import(module))[object.kind];
  if (!Model) {
    problems.push(`${where}: no schema known for this apiVersion and kind`);
    continue;
  }
  try {
    new Model(object).validate();
  } catch (error) {
    problems.push(`${where}: ${error.message}`);
  }
}
process.stdout.write(JSON.stringify(problems));
