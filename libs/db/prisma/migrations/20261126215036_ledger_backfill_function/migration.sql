-- The ledger's backfill as a function, the one place its logic lives from here on. The migration
-- that added the ledger (20261126140945_ledger) ran the same statement inline, once, on an empty
-- ledger; an applied migration is never edited (its checksum is recorded), so that copy stays as
-- it ran. On an empty ledger, `SELECT ledger_backfill(NULL, '…')` enters exactly what it entered.
-- The product never writes a transaction without its entries, so nothing in the services calls
-- this: its callers are the tests that write a merchant's history straight into the database
-- (tools/e2e/test/support/seed-history.ts) and then enter it as the backfill would have.
--
-- Enters in the ledger every transaction of `only_merchant` (of every merchant when NULL) that has
-- no entry yet, as if the ledger had been there: its creation's entry at created_at and, when
-- final, its settlement's at updated_at, each continuing its balance's chain after the entries
-- already there and never dated before the newest of them. Balances are upserted to the chain's
-- end (a new row takes the merchant's default credit limit). Returns how many entries it wrote.
-- The balance rows it continues are locked first, in key order, as every statement that writes
-- the ledger locks them; a balance whose row a concurrent statement creates meanwhile makes this
-- fail on ledger_entries' primary key (the same place in the chain), never skip a place.
CREATE FUNCTION "ledger_backfill"("only_merchant" uuid, "entry_reason" text)
RETURNS integer LANGUAGE sql VOLATILE AS $$
  SELECT 1 FROM balances
   WHERE only_merchant IS NULL OR merchant_id = only_merchant
   ORDER BY merchant_id, currency
     FOR UPDATE;

  WITH steps AS (
    SELECT t.merchant_id, t.currency, t.id AS transaction_id, t.amount, mv.kind, mv.debit, mv.credit, s.at, s.step
      FROM transactions t
     CROSS JOIN LATERAL (VALUES ('pending'::transaction_status, t.created_at, 0), (t.status, t.updated_at, 1)) AS s(status, at, step)
     CROSS JOIN LATERAL ledger_move(t.type, s.status) mv
     WHERE (only_merchant IS NULL OR t.merchant_id = only_merchant)
       AND (s.step = 0 OR t.status IN ('completed', 'failed'))
       AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.transaction_id = t.id)
  ),
  chained AS (
    SELECT st.*,
           greatest(st.at, b.last_entry_at) AS entered_at, -- never dated before the chain's last entry
           coalesce(b.entry_count, 0) + row_number() OVER w AS balance_seq,
           coalesce(b.available, 0) + sum(ledger_change(st.debit, st.credit, st.amount, 'available')) OVER w AS available,
           coalesce(b.held, 0) + sum(ledger_change(st.debit, st.credit, st.amount, 'held')) OVER w AS held,
           coalesce(b.incoming, 0) + sum(ledger_change(st.debit, st.credit, st.amount, 'incoming')) OVER w AS incoming
      FROM steps st
      LEFT JOIN balances b ON b.merchant_id = st.merchant_id AND b.currency = st.currency
    WINDOW w AS (PARTITION BY st.merchant_id, st.currency ORDER BY st.at, st.transaction_id, st.step ROWS UNBOUNDED PRECEDING)
  ),
  entered AS (
    INSERT INTO ledger_entries (merchant_id, currency, balance_seq, id, kind, debit_account, credit_account, amount,
                                available, held, incoming, transaction_id, reason, created_at)
    SELECT merchant_id, currency, balance_seq, uuid_v7(), kind, debit, credit, amount, available, held, incoming,
           transaction_id, entry_reason, entered_at
      FROM chained
    RETURNING merchant_id, currency, balance_seq, available, held, incoming, created_at
  ),
  last AS (
    SELECT DISTINCT ON (merchant_id, currency) * FROM entered ORDER BY merchant_id, currency, balance_seq DESC
  ),
  balanced AS (
    INSERT INTO balances AS b (merchant_id, currency, available, held, incoming, credit_limit, entry_count, last_entry_at)
    SELECT l.merchant_id, l.currency, l.available, l.held, l.incoming, m.credit_limit, l.balance_seq, l.created_at
      FROM last l JOIN merchants m ON m.id = l.merchant_id
     ORDER BY l.merchant_id, l.currency
    ON CONFLICT (merchant_id, currency) DO UPDATE
      SET available = excluded.available, held = excluded.held, incoming = excluded.incoming,
          entry_count = excluded.entry_count, last_entry_at = greatest(b.last_entry_at, excluded.last_entry_at)
  )
  SELECT count(*)::int FROM entered; -- balanced runs all the same (a data-modifying CTE always does)
$$;
