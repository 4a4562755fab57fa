// Runs one of the CLIs as its own process, the way an operator runs it, with the environment a
// test chooses. The CLIs are bundled by tools/build-app.mjs exactly as `npm run build` does (so the bundled
// form is what is tested) into a private folder under the app's tmp/, once per test process: tsx
// would re-transpile the generated Prisma client on every run, several times slower.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const APP_DIR = path.join(__dirname, '..', '..');
// Inside the app folder, so the bundle finds prisma/ and node_modules by walking up, like dist/.
const BUILD_DIR = path.join(APP_DIR, 'tmp', `cli-build-${process.pid}`);
const BUILD_APP = path.join(APP_DIR, '../../tools/build-app.mjs');
let built = false;

function buildOnce(): void {
  if (built) return;
  mkdirSync(BUILD_DIR, { recursive: true });
  execFileSync(process.execPath, [BUILD_APP, path.join(APP_DIR, 'src/cli/migrate.ts'), path.join(APP_DIR, 'src/cli/merchant.ts'), path.join(APP_DIR, 'src/cli/ledger.ts')], {
    cwd: BUILD_DIR,
    stdio: 'pipe',
  });
  built = true;
}

/** Removes this process's bundle; call in afterAll of every test file that ran a CLI. */
export function removeCliBuild(): void {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  built = false;
}

export function runCli(cli: 'migrate' | 'merchant' | 'ledger', args: string[], env: Record<string, string>): Promise<CliResult> {
  buildOnce();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(BUILD_DIR, 'dist', `${cli}.js`), ...args],
      { cwd: APP_DIR, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
