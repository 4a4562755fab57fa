/**
 * Module boundaries, enforced by dependency-cruiser with the rules of .dependency-cruiser.cjs
 * (derived from the projects' Nx tags): libraries never import apps, apps never import each other,
 * a library is used only through its entry point, and no relative import leaves its project. This
 * test runs it inside `npm test`, and shows on a small workspace of its own that each rule bites.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../../..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');
const run = promisify(execFile);

/** Runs dependency-cruiser in `cwd` over `dirs`; resolves with its exit code and report. */
async function cruise(cwd: string, dirs: string[]): Promise<{ code: number; report: string }> {
  try {
    const { stdout } = await run(DEPCRUISE, [...dirs, '--config', path.join(cwd, '.dependency-cruiser.cjs'), '--output-type', 'err'], { cwd, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
    return { code: 0, report: stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, report: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

function tagsOf(dir: string): string[] {
  return JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')).nx?.tags ?? [];
}

describe('module boundaries', () => {
  it('tags every app and lib with one type:* matching its folder, and a scope:*', () => {
    for (const group of ['apps', 'libs'] as const) {
      for (const name of readdirSync(path.join(ROOT, group))) {
        const tags = tagsOf(`${group}/${name}`);
        expect([`${group}/${name}`, tags.filter((t) => t.startsWith('type:'))]).toEqual([`${group}/${name}`, [group === 'apps' ? 'type:app' : 'type:lib']]);
        expect(tags.some((t) => t.startsWith('scope:'))).toBe(true);
      }
    }
  });

  it('finds no violation in apps/ and libs/', async () => {
    const { code, report } = await cruise(ROOT, ['apps', 'libs']);
    expect(report).toContain('no dependency violations found');
    expect(code).toBe(0);
  }, 120_000);

  describe('each rule bites (a workspace of its own with one violation per rule)', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'boundaries-'));
      cpSync(CONFIG, path.join(dir, '.dependency-cruiser.cjs'));
      const project = (where: string, tag: string, files: Record<string, string>) => {
        mkdirSync(path.join(dir, where, 'src'), { recursive: true });
        writeFileSync(path.join(dir, where, 'package.json'), JSON.stringify({ name: `@dw/${path.basename(where)}`, main: 'src/index.ts', nx: { tags: [tag, 'scope:test'] } }));
        for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, where, 'src', file), text);
      };
      project('apps/one', 'type:app', { 'index.ts': "import { two } from '../../two/src/index';\nexport const one = two;\n" });
      project('apps/two', 'type:app', { 'index.ts': "import { inner } from '@dw/lib/src/inner';\nexport const two = inner;\n" });
      project('libs/lib', 'type:lib', {
        'index.ts': "export { inner } from './inner';\n",
        'inner.ts': "import { one } from '@dw/one';\nexport const inner = one;\n",
      });
      mkdirSync(path.join(dir, 'tools'));
      writeFileSync(
        path.join(dir, 'tsconfig.base.json'),
        JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@dw/one': ['apps/one/src/index.ts'], '@dw/lib': ['libs/lib/src/index.ts'], '@dw/lib/*': ['libs/lib/*'] } } }),
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reports lib-imports-app, app-imports-app, lib-deep-import and relative-import-leaves-project', async () => {
      const { code, report } = await cruise(dir, ['apps', 'libs']);
      expect(code).not.toBe(0);
      expect(report).toMatch(/lib-imports-app: libs\/lib\/src\/inner\.ts → apps\/one\/src\/index\.ts/);
      expect(report).toMatch(/app-imports-app: apps\/one\/src\/index\.ts → apps\/two\/src\/index\.ts/);
      expect(report).toMatch(/relative-import-leaves-project: apps\/one\/src\/index\.ts → apps\/two\/src\/index\.ts/);
      expect(report).toMatch(/lib-deep-import: apps\/two\/src\/index\.ts → libs\/lib\/src\/inner\.ts/);
    }, 120_000);
  });
});
