// What docs/deploy.md and docs/operations.md state about the deployment, checked against the code
// and the rendered chart they describe, so a change to either shows up as a failing doc.
import { loadCallbackConfig, loadTransactionsConfig } from '@dw/config';
import { readText } from '../src/repo-files';

const deployMd = readText('docs/deploy.md');
/** The doc's text with its line breaks and indentation folded, so a sentence can be matched whole. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

describe("docs/deploy.md's PostgreSQL connection sizing", () => {
  const required = { INTERNAL_AUTH_SECRETS: 'x'.repeat(32) };
  const pool = loadTransactionsConfig(required).databasePoolSize;
  const exportsPool = loadTransactionsConfig(required).exportDatabasePoolSize;
  const relayPool = Number(/createPool\(opts\.databaseUrl, (\d+),/.exec(readText('apps/transactions-svc/src/outbox/outbox-relay.ts'))?.[1]);
  const callbackPool = loadCallbackConfig({}).databasePoolSize;

  it("counts transactions-svc's export and outbox relay pools beside config.databasePoolSize", () => {
    expect(readText('apps/transactions-svc/src/main.ts')).toMatch(/createPool\(config\.databaseUrl, config\.exportDatabasePoolSize/);
    expect(relayPool).toBeGreaterThan(0);
    const text = flat(deployMd);
    expect(text).toContain(`opens up to \`config.databasePoolSize\` (${pool}) for requests and its background jobs, plus ${exportsPool} for exports`);
    expect(text).toContain(`plus ${relayPool} for the outbox relay: ${pool + exportsPool + relayPool} by default`);
    expect(text).toContain(`(transactions-svc pods) × (databasePoolSize + ${exportsPool + relayPool}) + (callback-svc pods) × databasePoolSize`);
    expect(text).toContain(`8 × ${pool + exportsPool + relayPool} + 8 × ${callbackPool} = ${8 * (pool + exportsPool + relayPool) + 8 * callbackPool}`);
    expect(text).not.toMatch(/pod opens up to `config\.databasePoolSize` PostgreSQL connections/);
  });
});
