// `npm run chart:schema`: regenerates k8s/deposit-withdraw/values.schema.json from values.yaml's
// `## @param` lines and values.schema.rules.json (src/chart-schema.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { generateChartSchema, SCHEMA_FILE } from '../src/chart-schema';

const before = readFileSync(SCHEMA_FILE, 'utf8');
const after = generateChartSchema();
writeFileSync(SCHEMA_FILE, after);
console.log(before === after ? 'values.schema.json: already up to date' : 'values.schema.json: regenerated');
