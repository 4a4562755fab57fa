/**
 * The service as `npm run build` bundles it and `npm start` runs it (OpenTelemetry preload), as a
 * child process a test can signal and watch exit.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eventually } from './fixtures';

const APP_DIR = path.join(__dirname, '..', '..');
const BUILD_APP = path.join(APP_DIR, '../../tools/build-app.mjs');

export interface BuiltService {
  dir: string;
  remove(): void;
}

/** Bundles the service with the repository's own app bundler into a directory of its own. */
export function buildService(label: string): BuiltService {
  const dir = path.join(APP_DIR, 'tmp', `svc-build-${label}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  execFileSync(process.execPath, [BUILD_APP, path.join(APP_DIR, 'src/main.ts'), path.join(APP_DIR, 'src/instrumentation.ts')], { cwd: dir, stdio: 'pipe' });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  output(): string;
  /** Resolves once /readyz answers 200. */
  ready(timeoutMs?: number): Promise<void>;
}

export function startServiceProcess(build: BuiltService, port: number, env: Record<string, string>): ServiceProcess {
  const dist = path.join(build.dir, 'dist');
  const child = spawn(process.execPath, ['--require', path.join(dist, 'instrumentation.js'), path.join(dist, 'main.js')], {
    cwd: APP_DIR,
    env: { ...process.env, CALLBACK_PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    port,
    exited,
    output: () => output,
    ready: (timeoutMs = 20_000) =>
      eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, timeoutMs, 100),
  };
}
