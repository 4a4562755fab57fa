import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configTable, withConfigTable } from '../src/config-table';
import { gatewaySpec } from '../src';

const readme = readFileSync(path.resolve(__dirname, '../../../README.md'), 'utf8');

describe("the README's configuration table", () => {
  it('is the one the settings generate (run `npm run docs:config` after changing a setting)', () => {
    expect(withConfigTable(readme)).toBe(readme);
  });

  it('has one row per variable, with its default as the schema states it', () => {
    const table = configTable();
    expect(table).toContain('| `RATE_LIMIT_PER_SECOND` | 100 | gateway: per-token bucket, burst of the same size |');
    expect(table).toContain('| `DATABASE_URL` | `postgresql://postgres@127.0.0.1:5432/deposit_withdraw` | transactions-svc, callback-svc: ');
    for (const setting of Object.values(gatewaySpec)) expect(table).toContain(`| \`${setting.name}\` |`);
  });
});
