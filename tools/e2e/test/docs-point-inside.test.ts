/**
 * The docs and comments a reader of the repository can follow: none names a file outside it (the
 * public API is docs/api.md), and docs/decisions.md's index lists every section it has.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const SCANNED = ['apps', 'libs', 'tools', 'docs', 'k8s', 'scripts', 'README.md'];
// Applied migrations keep their text: PostgreSQL records each one's checksum.
const SKIPPED = /(^|\/)(node_modules|dist|generated|migrations)(\/|$)/;
const OUTSIDE = /CONTRACT(\.md|\s*§?\s*\d)|contract\s*§\s*\d|(DESIGN|RECIPES|STYLE)\.md|\.\.\/shared\b/;

function files(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (SKIPPED.test(entry)) return [];
  if (!statSync(full).isDirectory()) return /\.(ts|js|mjs|cjs|md|ya?ml|json|tpl|txt|sql|sh)$/.test(entry) ? [entry] : [];
  return readdirSync(full).flatMap((child) => files(path.posix.join(entry, child)));
}

describe('docs point only inside the repository', () => {
  it('no comment or doc names CONTRACT.md, DESIGN.md, "contract §N" or ../shared', () => {
    const hits = SCANNED.flatMap(files)
      .filter((file) => file !== 'tools/e2e/test/docs-point-inside.test.ts')
      .flatMap((file) =>
        readFileSync(path.join(ROOT, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (OUTSIDE.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(hits).toEqual([]);
  });

  it("docs/decisions.md's index links every section, in order", () => {
    const text = readFileSync(path.join(ROOT, 'docs/decisions.md'), 'utf8');
    const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    const anchor = (title: string) => title.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');
    const index = [...text.slice(0, text.indexOf('\n## ')).matchAll(/^- \[(.+)\]\(#(.+)\)$/gm)].map((m) => [m[1], m[2]]);
    expect(index).toEqual(sections.map((title) => [title, anchor(title)]));
  });

  it('catches a reference when there is one (self-check of the pattern)', () => {
    for (const line of ['see CONTRACT.md', '(CONTRACT 4.7)', 'contract §1', 'CONTRACT §6', 'per DESIGN.md', '../shared/x']) expect(OUTSIDE.test(line)).toBe(true);
    for (const line of ['CONTRACT_FORMATS', 'libs/contracts', 'RFC 9110 §7.6.1', 'issue 8 §4']) expect(OUTSIDE.test(line)).toBe(false);
  });
});
