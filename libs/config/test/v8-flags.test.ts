/**
 * The services' V8 flags (src/v8-flags.ts). V8 ignores a flag it does not know without a word, so a
 * misspelt flag, or one a V8 upgrade removed, would silently stop applying: each must be one this
 * Node's V8 lists. And each app's preload must apply them, first.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICE_V8_FLAGS } from '../src/v8-flags';

const ROOT = path.join(__dirname, '..', '..', '..');
const APPS = ['api-gateway', 'transactions-svc', 'callback-svc', 'ui'];

describe('the services V8 flags', () => {
  it('are flags this V8 knows', () => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const flag of SERVICE_V8_FLAGS) {
      const name = flag.replace(/^--(no-)?/, '').replace(/=.*$/, '');
      expect(known).toMatch(new RegExp(`^\\s+--${name}\\b`, 'm'));
    }
  });

  it.each(APPS)('are applied by %s before it starts telemetry or anything else', (app) => {
    const preload = readFileSync(path.join(ROOT, 'apps', app, 'src', 'instrumentation.ts'), 'utf8');
    const statements = preload.split('\n').filter((line) => /^[a-zA-Z]/.test(line) && !line.startsWith('import '));
    expect(statements[0]).toBe('applyServiceV8Flags();');
  });
});
