/**
 * A merchant holds balances in at most 1,000 currencies (docs/money.md, "Currencies"). The rule is
 * the database's alone: the trigger of migration 20261127180000_currency_cap refuses a merchant's
 * balance row beyond the cap with SQLSTATE 23L01, and nothing here counts currencies again (a
 * withdraw about to be refused asks the trigger, in a transaction rolled back: transactions-repo.ts).
 * That code is in class 23 (integrity constraint violation), so a batched create refused for one
 * row's sake is written again row by row (transactions-repo.ts) and only that create is refused.
 */
/** The trigger's number, for the refusal's message; changing it here changes nothing else. */
export const MAX_CURRENCIES_PER_MERCHANT = 1000;

const CURRENCY_CAP_SQLSTATE = '23L01';

/** Whether `error` is the database refusing a merchant's currency beyond the cap. */
export const isCurrencyCap = (error: unknown): boolean => (error as { code?: unknown } | undefined)?.code === CURRENCY_CAP_SQLSTATE;
