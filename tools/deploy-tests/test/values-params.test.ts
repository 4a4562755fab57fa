// bitnami's convention: a `## @param <path> <description>` line directly above every value, so the
// README table and the schema can be generated and nobody guesses what a value does.
import { chartValues, isObject, readText, valueAt, type Json } from '../src/repo-files';

const lines = readText('k8s/deposit-withdraw/values.yaml').split('\n');
const values = chartValues();
const PARAM = /^\s*## @param (\S+) (\S.*)$/;

/** Each @param path with the line index it sits on. */
function params(): Map<string, number> {
  const found = new Map<string, number>();
  lines.forEach((line, index) => {
    const match = PARAM.exec(line);
    if (match) found.set(match[1]!, index);
  });
  return found;
}

describe('## @param lines of values.yaml', () => {
  it('document every value (a leaf, or an object passed through whole)', () => {
    const documented = params();
    const missing: string[] = [];
    const walk = (value: Json, path: string): void => {
      if (documented.has(path)) return;
      if (isObject(value) && Object.keys(value).length > 0) {
        for (const [key, child] of Object.entries(value)) walk(child, `${path}.${key}`);
      } else {
        missing.push(path);
      }
    };
    for (const [key, value] of Object.entries(values)) walk(value, key);
    expect(missing).toEqual([]);
  });

  it('name only values that exist', () => {
    const stale = [...params().keys()].filter((path) => valueAt(values, path) === undefined);
    expect(stale).toEqual([]);
  });

  it('sit directly above the key they document', () => {
    const misplaced = [...params()].filter(([path, index]) => {
      const key = path.split('.').pop()!;
      return !new RegExp(`^\\s*${key}:`).test(lines[index + 1] ?? '');
    });
    expect(misplaced.map(([path]) => path)).toEqual([]);
  });
});

describe("## @extra lines of values.yaml (a block's description in the generated schema)", () => {
  it('name only blocks that exist', () => {
    const extras = lines.map((line) => /^\s*## @extra (\S+) \S/.exec(line)?.[1]).filter((path) => path !== undefined);
    expect(extras.length).toBeGreaterThan(0);
    expect(extras.filter((path) => !isObject(valueAt(values, path) ?? null))).toEqual([]);
  });
});
