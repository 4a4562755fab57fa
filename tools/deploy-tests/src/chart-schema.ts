// The chart's values.schema.json, generated so that it cannot drift from values.yaml:
// bitnami's readme-generator-for-helm turns the `## @param` lines into a schema of types,
// descriptions and defaults, and the steps below complete it the same way every time
// (docs/decisions.md, "The chart's values schema"). `npm run chart:schema` writes the file;
// test/chart-schema.test.ts fails when the file and this generation differ.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apply as mergePatch } from 'json-merge-patch';
import { CHART_DIR, chartValues, isObject, type Json, type JsonObject } from './repo-files';

export const SCHEMA_FILE = path.join(CHART_DIR, 'values.schema.json');
export const RULES_FILE = path.join(CHART_DIR, 'values.schema.rules.json');
const VALUES_FILE = path.join(CHART_DIR, 'values.yaml');
const GENERATOR = '@bitnami/readme-generator-for-helm';

/** One `## @param` or `## @extra` line, as the generator's own parser reads it. */
interface Metadata {
  name: string;
  description: string;
  modifiers: string[];
  extra: boolean;
}

function generatorMetadata(): Metadata[] {
  // The generator's parser (the version is pinned exactly), so a line means here what it means there.
  const { parseMetadataComments } = require(`${GENERATOR}/lib/parser`) as {
    parseMetadataComments(valuesPath: string, config: unknown): { parameters: Metadata[] };
  };
  const config: unknown = JSON.parse(readFileSync(require.resolve(`${GENERATOR}/config.json`), 'utf8'));
  return parseMetadataComments(VALUES_FILE, config).parameters;
}

/** The generator's schema (OpenAPI 3 flavoured), from its command line as a user would run it. */
function generatorSchema(): JsonObject {
  const work = mkdtempSync(path.join(tmpdir(), 'dw-chart-schema-'));
  try {
    const out = path.join(work, 'schema.json');
    try {
      execFileSync(process.execPath, [require.resolve(`${GENERATOR}/bin/index.js`), '--values', VALUES_FILE, '--schema', out], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      const reasons = `${stdout}\n${stderr}`.split('\n').filter((line) => /ERROR|Error:/.test(line));
      throw new Error(`${GENERATOR} refused k8s/deposit-withdraw/values.yaml:\n${reasons.join('\n')}`);
    }
    return JSON.parse(readFileSync(out, 'utf8')) as JsonObject;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function properties(node: JsonObject): JsonObject {
  if (!isObject(node['properties'])) node['properties'] = {};
  return node['properties'] as JsonObject;
}

/** The schema node of a dotted values path, creating the objects on the way. */
function nodeFor(root: JsonObject, dotted: string): JsonObject {
  let node = root;
  for (const key of dotted.split('.')) {
    const props = properties(node);
    if (!isObject(props[key])) props[key] = { type: 'object' };
    node = props[key] as JsonObject;
  }
  return node;
}

function valueAtPath(values: JsonObject, dotted: string): Json {
  let node: Json = values;
  for (const key of dotted.split('.')) node = isObject(node) ? (node[key] ?? null) : null;
  return node;
}

/**
 * Properties in the order of values.yaml; every object built from values.yaml's nesting is closed
 * (additionalProperties false: a misspelt key fails the install) and requires its keys (Helm
 * validates the defaults merged with the user's values, so they are always there unless nulled).
 */
function closeObjects(node: JsonObject, value: Json): void {
  if (!isObject(node['properties'])) return;
  const props = node['properties'];
  const order = isObject(value) ? Object.keys(value) : [];
  const keys = [...order.filter((key) => key in props), ...Object.keys(props).filter((key) => !order.includes(key))];
  const sorted: JsonObject = {};
  for (const key of keys) {
    sorted[key] = props[key]!;
    closeObjects(sorted[key] as JsonObject, isObject(value) ? (value[key] ?? null) : null);
  }
  const { type, description, ...rest } = node;
  delete rest['properties'];
  for (const key of Object.keys(node)) delete node[key];
  Object.assign(node, { type, ...(description === undefined ? {} : { description }), ...rest, properties: sorted, additionalProperties: false, required: keys });
}

/** The schema nodes a rule's dotted path names; `*` stands for any one key. */
function ruleTargets(root: JsonObject, pattern: string): JsonObject[] {
  let nodes = [root];
  for (const key of pattern.split('.')) {
    nodes = nodes.flatMap((node) => {
      const props = isObject(node['properties']) ? node['properties'] : {};
      const names = key === '*' ? Object.keys(props) : [key];
      return names.map((name) => props[name]).filter(isObject);
    });
  }
  return nodes;
}

/** OpenAPI's `nullable: true` (which Helm's JSON Schema validator ignores) as a `null` type. */
function nullableToNullType(node: Json): void {
  if (Array.isArray(node)) node.forEach(nullableToNullType);
  if (!isObject(node)) return;
  if (node['nullable'] === true) {
    delete node['nullable'];
    const types = Array.isArray(node['type']) ? node['type'] : [node['type'] ?? 'object'];
    node['type'] = types.includes('null') ? types : [...types, 'null'];
  }
  Object.values(node).forEach(nullableToNullType);
}

export function chartSchemaRules(): JsonObject {
  return JSON.parse(readFileSync(RULES_FILE, 'utf8')) as JsonObject;
}

/** The text of values.schema.json as values.yaml and the rules (values.schema.rules.json) make it now. */
export function generateChartSchema(rules: JsonObject = chartSchemaRules()): string {
  const schema = generatorSchema();
  const values = chartValues();

  for (const meta of generatorMetadata()) {
    const passedThrough = meta.modifiers.includes('object') || meta.modifiers.includes('array');
    if (!meta.extra && !passedThrough) continue;
    // The generator checks `@param` paths against values.yaml, not `@extra` ones.
    if (meta.extra && !isObject(valueAtPath(values, meta.name))) throw new Error(`values.yaml: \`@extra ${meta.name}\` names no block`);
    const node = nodeFor(schema, meta.name);
    if (meta.extra) {
      // `@extra` describes a block; the generator leaves blocks undescribed.
      node['description'] = meta.description;
    } else {
      // Passed through whole: the generator leaves `[object]` out and gives `[array]` the
      // placeholder "[]" as its default. Typed and described here, with its real default.
      for (const key of Object.keys(node)) delete node[key];
      Object.assign(node, {
        type: meta.modifiers.includes('array') ? 'array' : 'object',
        description: meta.description,
        default: valueAtPath(values, meta.name),
      });
    }
  }
  closeObjects(schema, values);

  for (const [pattern, patch] of Object.entries(rules)) {
    if (pattern.startsWith('$')) continue; // $comment
    const targets = pattern === '' ? [schema] : ruleTargets(schema, pattern);
    if (targets.length === 0) throw new Error(`values.schema.rules.json: "${pattern}" names no value of values.yaml`);
    for (const target of targets) mergePatch(target, patch);
  }
  nullableToNullType(schema);

  const { title, ...rest } = schema;
  return `${JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', title, ...rest }, null, 2)}\n`;
}
