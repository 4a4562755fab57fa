#!/usr/bin/env node
// Bundles one app with esbuild: workspace libs (tsconfig paths) are bundled in, node_modules stay
// external so OpenTelemetry can patch them at require time. Run from the app's folder with its
// entry points as arguments; writes dist/<entry>.js.
import { build } from 'esbuild';
import path from 'node:path';

const entries = process.argv.slice(2);
if (entries.length === 0) {
  console.error('usage: build-app.mjs <entry.ts>...');
  process.exit(2);
}
await build({
  entryPoints: entries,
  outdir: 'dist',
  outbase: path.dirname(entries[0]),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  sourcemap: true,
  tsconfig: path.resolve(import.meta.dirname, '../tsconfig.base.json'),
  logLevel: 'warning',
});
