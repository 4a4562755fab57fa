// Reads the deployment files of the repository (chart, compose file, Dockerfile) the way their tools
// do, so the tests check what Helm and Docker Compose would actually see.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const CHART_DIR = path.join(REPO_ROOT, 'k8s/deposit-withdraw');

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function readText(relativePath: string): string {
  return readFileSync(path.join(REPO_ROOT, relativePath), 'utf8');
}

/** YAML 1.1 merge keys (`<<: *anchor`) on, as Docker Compose reads them. */
export function readYaml(relativePath: string): JsonObject {
  return YAML.parse(readText(relativePath), { merge: true }) as JsonObject;
}

export function chartValues(): JsonObject {
  return readYaml('k8s/deposit-withdraw/values.yaml');
}

export function chartSchema(): JsonObject {
  return JSON.parse(readText('k8s/deposit-withdraw/values.schema.json')) as JsonObject;
}

/** Every file under the chart's templates/, by name. */
export function chartTemplates(): Map<string, string> {
  const dir = path.join(CHART_DIR, 'templates');
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(path.join(dir, name), 'utf8')]));
}

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's merge of user values over the chart's: maps merge key by key, anything else replaces. */
export function mergeValues(base: JsonObject, override: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? mergeValues(current, value) : value;
  }
  return out;
}

/** The value at a dotted path, or undefined when any step is missing. */
export function valueAt(root: Json, dotted: string): Json | undefined {
  let node: Json | undefined = root;
  for (const key of dotted.split('.')) {
    if (!isObject(node) || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}
