/**
 * Module boundaries, from the projects' Nx tags (package.json `nx.tags`), checked by
 * dependency-cruiser on every source file (`npm run lint:boundaries`; inside `npm test` through
 * tools/e2e/test/module-boundaries.test.ts):
 *   - a project tagged type:lib never imports one tagged type:app;
 *   - a type:app never imports another type:app;
 *   - a library is used only through its entry points (package.json `main` and `exports`: `@dw/<name>`, `@dw/<name>/<entry>`);
 *   - no relative import leaves its own project.
 */
const { readdirSync, readFileSync, existsSync } = require('node:fs');
const path = require('node:path');

const projects = ['apps', 'libs', 'tools']
  .flatMap((group) => readdirSync(path.join(__dirname, group)).map((d) => `${group}/${d}`))
  .filter((dir) => existsSync(path.join(__dirname, dir, 'package.json')))
  .map((dir) => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, dir, 'package.json'), 'utf8'));
    // A library's entry points: its `main`, and the entries its package.json `exports` declares
    // (libs/db's `@dw/db/testing` and `@dw/db/migrations`).
    const exported = Object.values(pkg.exports ?? {}).filter((e) => typeof e === 'string' && e.endsWith('.ts'));
    return { dir, entries: [pkg.main, ...exported].filter(Boolean), tags: pkg.nx?.tags ?? [] };
  });

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const dirsTagged = (tag) => projects.filter((p) => p.tags.includes(tag)).map((p) => escape(p.dir));
const anyOf = (dirs) => `^(${dirs.join('|')})/`;
const apps = dirsTagged('type:app');
const libs = dirsTagged('type:lib');
const entryPoints = projects
  .filter((p) => p.tags.includes('type:lib'))
  .flatMap((p) => p.entries.map((entry) => `^${escape(path.posix.join(p.dir, entry))}$`));

module.exports = {
  forbidden: [
    {
      name: 'lib-imports-app',
      comment: 'Libraries never import apps.',
      severity: 'error',
      from: { path: anyOf(libs) },
      to: { path: anyOf(apps) },
    },
    {
      name: 'app-imports-app',
      comment: 'Apps never import each other.',
      severity: 'error',
      from: { path: `^(${apps.join('|')})/` },
      to: { path: anyOf(apps), pathNot: '^$1/' },
    },
    {
      name: 'lib-deep-import',
      comment: "A library is used only through its entry point (its index): import '@dw/<name>'.",
      severity: 'error',
      from: { path: '^(apps|libs)/([^/]+)/' },
      to: { path: anyOf(libs), pathNot: ['^$1/$2/', ...entryPoints] },
    },
    {
      name: 'relative-import-leaves-project',
      comment: 'A relative import stays inside its own project.',
      severity: 'error',
      from: { path: '^(apps|libs)/([^/]+)/' },
      to: { dependencyTypes: ['local'], dependencyTypesNot: ['aliased'], pathNot: '^$1/$2/' },
    },
    {
      name: 'unresolvable-workspace-import',
      comment: 'An @dw/ import names a project that exists.',
      severity: 'error',
      from: { path: '^(apps|libs)/' },
      to: { couldNotResolve: true, path: '^@dw/' },
    },
  ],
  options: {
    // Config files (jest.config.js, prisma.config.ts) may reach the workspace's shared presets.
    exclude: { path: ['node_modules', '/dist/', '/generated/', '\\.config\\.(ts|js)$'] },
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.base.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
