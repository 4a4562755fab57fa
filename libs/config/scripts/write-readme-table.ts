// `npm run docs:config`: rewrites the README's configuration table from the settings' schemas.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { withConfigTable } from '../src/config-table';

const readme = path.resolve(__dirname, '../../../README.md');
const before = readFileSync(readme, 'utf8');
const after = withConfigTable(before);
writeFileSync(readme, after);
console.log(before === after ? 'README.md: configuration table already up to date' : 'README.md: configuration table rewritten');
