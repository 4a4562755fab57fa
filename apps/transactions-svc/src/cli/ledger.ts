// `npm run ledger:verify`: recomputes every balance from the ledger's entries and prints one JSON
// line, {"ok":true,…} or what differs; exit 0 only when nothing differs (1: differences or failure).
import { createPool } from '@dw/db';
import { verifyLedger } from '../domain/ledger-verify';
import { UsageError, checkDatabase, databaseUrlFrom, reportFailure } from './cli-support';

const HELP = `Usage: ledger verify
Recomputes every balance from the ledger's entries and checks the chain of balances after each
entry, that each currency's postings sum to zero and that every transaction has the entries its
status calls for. Prints one line of JSON: {"ok":true|false,"balances","entries","transactions",
"overdrawn","differences":{…up to 20 examples of each…}}.
Reads DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/deposit_withdraw).
Exit codes: 0 nothing differs, 1 something differs or the check failed ({"ok":false,"error"}),
2 bad usage.
`;

export async function runLedgerCli(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const url = databaseUrlFrom(env);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  const db = createPool(url, 1);
  try {
    if (argv[0] === undefined) throw new UsageError('missing command (verify)');
    if (argv[0] !== 'verify') throw new UsageError(`unknown command ${argv[0]}`);
    if (argv.length > 1) throw new UsageError(`unexpected argument ${argv[1]} (verify takes none)`);
    await checkDatabase(url);
    const report = await verifyLedger(db);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return report.ok ? 0 : 1;
  } catch (error) {
    const code = reportFailure('ledger', error, url);
    // A check that could not run is not "nothing differs": its one JSON line says so too, for a
    // monitor that reads stdout (the reason, as on stderr, is in `error`).
    if (code === 1) process.stdout.write(`${JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) })}\n`);
    return code;
  } finally {
    await db.end();
  }
}

if (require.main === module) {
  void runLedgerCli(process.argv.slice(2), process.env).then((code) => {
    process.exitCode = code;
  });
}
