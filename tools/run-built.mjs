#!/usr/bin/env node
// Runs a built entry point of an app, building the app first when its dist/ is missing (a fresh
// clone). Build output goes to stderr so commands that print JSON keep a clean stdout.
// Usage (from an app folder): node ../../tools/run-built.mjs dist/cli/merchant.js [args…]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const [entry, ...args] = process.argv.slice(2);
if (!existsSync(entry)) {
  const project = JSON.parse(readFileSync('package.json', 'utf8')).name;
  console.error(`[run-built] ${entry} is missing: building ${project} first…`);
  const built = spawnSync('npx', ['nx', 'run', `${project}:build`, '--outputStyle=static'], {
    stdio: ['ignore', 2, 2],
    env: { ...process.env, NX_DAEMON: 'false' },
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const run = spawnSync(process.execPath, [entry, ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);
