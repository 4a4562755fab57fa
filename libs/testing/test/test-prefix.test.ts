/**
 * testPrefix() writes the one shape of a test run's broker prefix, and `npm run broker:leftovers`
 * (scripts/broker-leftovers.mjs, through scripts/test-prefix-pattern.mjs) reads it back from the
 * names of what a killed run left behind: the two must agree, or leftovers pile up unseen.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { testPrefix } from '../src';

const PATTERN_MODULE = pathToFileURL(path.join(__dirname, '../../../scripts/test-prefix-pattern.mjs')).href;

/** What the leftovers script takes as the prefix of each name (null: not a test run's). */
function prefixesSeenByLeftovers(names: string[]): Array<string | null> {
  const code = `import { TEST_PREFIX } from '${PATTERN_MODULE}';
    console.log(JSON.stringify(JSON.parse(process.argv[1]).map((n) => TEST_PREFIX.exec(n)?.[1] ?? null)));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code, JSON.stringify(names)], { encoding: 'utf8' }));
}

describe('testPrefix', () => {
  it('is test.<label>.<8 hex>., with a fresh id each time unless one is given', () => {
    expect(testPrefix('callback-svc.retries')).toMatch(/^test\.callback-svc\.retries\.[0-9a-f]{8}\.$/);
    expect(testPrefix('outbox-relay')).not.toBe(testPrefix('outbox-relay'));
    expect(testPrefix('e2e.bench_cost', '0a1b2c3d')).toBe('test.e2e.bench_cost.0a1b2c3d.');
  });

  it.each([[''], ['a b'], ['a..b'], ['.a'], ['a/b'], ['cafebabe'], ['x.deadbeef.y']])('refuses the label %j', (label) => {
    expect(() => testPrefix(label)).toThrow(/not a test prefix label/);
  });

  it('refuses an id that is not 8 hex digits', () => {
    expect(() => testPrefix('x', 'abc')).toThrow(/8 hex digits/);
  });

  it('is what broker:leftovers takes as the prefix of each queue and exchange a run declares', () => {
    // `image`: the image test's (tools/deploy-tests/image/test-image.sh calls testPrefix too).
    const prefixes = [testPrefix('publish'), testPrefix('callback-svc.hanging-schedule'), testPrefix('e2e.bench_cost'), testPrefix('bench.samework'), testPrefix('image')];
    const names = prefixes.flatMap((p) => [`${p}callbacks.deliver`, `${p}callbacks.retry.5000ms`, `${p}tokens`]);
    expect(prefixesSeenByLeftovers(names)).toEqual(prefixes.flatMap((p) => [p, p, p]));
  });

  it('leaves every other name alone', () => {
    expect(prefixesSeenByLeftovers(['callbacks.deliver', 'dw.callbacks.retry.5000ms', 'testing.0a1b2c3d.x', 'test.callbacks.deliver', 'amq.direct'])).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});
