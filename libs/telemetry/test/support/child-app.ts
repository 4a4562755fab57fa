import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const libDir = path.resolve(__dirname, '../..');
const repoRoot = path.resolve(libDir, '../..');

/**
 * Bundles the fixture app with the repository's own app bundler (tools/build-app.mjs), into a
 * git-ignored folder inside the lib so the bundle's external requires resolve to node_modules.
 */
export function buildFixtureApp(): string {
  fs.mkdirSync(path.join(libDir, 'tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(libDir, 'tmp', 'preload-'));
  const fixtures = path.join(libDir, 'test', 'fixtures');
  execFileSync(process.execPath, [
    path.join(repoRoot, 'tools', 'build-app.mjs'),
    path.join(fixtures, 'instrumentation.ts'),
    path.join(fixtures, 'main.ts'),
  ], { cwd: dir, stdio: 'pipe' });
  return dir;
}

export interface ChildRun {
  code: number | null;
  elapsedMs: number;
  stdout: string;
  stderr: string;
  lines: Record<string, unknown>[];
}

/** The environment without any OTEL_* the developer's shell may have. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  return { ...env, ...extra };
}

/** Runs `node --require ./dist/instrumentation.js dist/main.js` as the apps do; kills it after 10 s. */
export function runFixtureApp(dir: string, env: Record<string, string>): Promise<ChildRun> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--require', './dist/instrumentation.js', 'dist/main.js'], {
    cwd: dir,
    env: cleanEnv(env),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(killer);
      const lines = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      resolve({ code, elapsedMs: Date.now() - started, stdout, stderr, lines });
    });
  });
}
