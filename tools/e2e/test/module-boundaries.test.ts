/**
 * The layout rules of DESIGN.md, enforced on every source file: libraries never import apps, apps
 * never import each other, a library is used only through its entries (`@dw/name`, or a second entry
 * its package.json exports, such as `@dw/db/testing`), and no relative import climbs out of its own
 * project. Projects are tagged type:app / type:lib in package.json.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

interface Project {
  dir: string;
  name: string;
  tags: string[];
  /** Entries besides the index: './testing' of package.json "exports" becomes 'testing'. */
  entries: string[];
}

function projects(group: 'apps' | 'libs'): Project[] {
  return readdirSync(path.join(ROOT, group)).map((d) => {
    const dir = path.join(ROOT, group, d);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const entries = Object.keys(pkg.exports ?? {}).filter((key) => key !== '.' && !key.endsWith('.json'));
    return { dir, name: pkg.name, tags: pkg.nx?.tags ?? [], entries: entries.map((key) => key.replace(/^\.\//, '')) };
  });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    if (entry === 'node_modules' || entry === 'dist' || entry === 'generated') return [];
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    // Config files (jest.config.js, prisma.config.ts) may reach the workspace's shared presets.
    if (/\.config\.(ts|js)$/.test(entry)) return [];
    return /\.(ts|js|mjs)$/.test(entry) ? [full] : [];
  });
}

const IMPORT = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"]([^'"]+)['"]/g;

function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]!);
}

const all = [...projects('apps'), ...projects('libs')];
const byName = new Map(all.map((p) => [p.name, p]));

describe('module boundaries', () => {
  it('tags every project with type:* and scope:*', () => {
    for (const p of all) {
      expect(p.tags.filter((t) => t.startsWith('type:'))).toHaveLength(1);
      expect(p.tags.some((t) => t.startsWith('scope:'))).toBe(true);
    }
  });

  it.each(all.map((p) => [p.name, p] as const))('%s imports only what its type allows', (_name, project) => {
    const violations: string[] = [];
    for (const file of sourceFiles(project.dir)) {
      for (const spec of importsOf(file)) {
        const where = `${path.relative(ROOT, file)} imports ${spec}`;
        if (spec.startsWith('@dw/')) {
          const [scope, name, ...rest] = spec.split('/');
          const target = byName.get(`${scope}/${name}`);
          if (!target) violations.push(`${where}: no such project`);
          else if (rest.length > 0 && !target.entries.includes(rest.join('/'))) violations.push(`${where}: use the library's index or an entry it exports`);
          else if (target.tags.includes('type:app')) violations.push(`${where}: apps are never imported`);
        } else if (spec.startsWith('.')) {
          const resolved = path.resolve(path.dirname(file), spec);
          if (!resolved.startsWith(project.dir + path.sep)) violations.push(`${where}: leaves ${path.relative(ROOT, project.dir)}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('catches a violation when there is one (self-check of the scanner)', () => {
    expect(importsOf(__filename).length).toBeGreaterThan(0);
    expect([...`import x from '@dw/api-gateway';`.matchAll(IMPORT)].map((m) => m[1])).toEqual(['@dw/api-gateway']);
  });
});
