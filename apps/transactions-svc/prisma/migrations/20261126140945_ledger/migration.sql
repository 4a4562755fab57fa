-- The ledger (docs/money.md, docs/decisions.md "The ledger"): balances per merchant and currency,
-- an append-only double-entry ledger whose entries move an amount between two accounts, the entry
-- each status writes, and the backfill of every transaction that existed before.

-- CreateEnum
CREATE TYPE "ledger_entry_kind" AS ENUM ('deposit.pending', 'deposit.completed', 'deposit.failed', 'withdraw.hold', 'withdraw.completed', 'withdraw.release', 'adjustment');

-- CreateEnum
CREATE TYPE "ledger_account" AS ENUM ('available', 'held', 'incoming', 'external:deposits', 'external:withdrawals', 'platform:adjustments');

-- AlterTable
ALTER TABLE "merchants" ADD COLUMN     "credit_limit" DECIMAL NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "balances" (
    "merchant_id" UUID NOT NULL,
    "currency" VARCHAR(10) NOT NULL,
    "available" DECIMAL NOT NULL DEFAULT 0,
    "held" DECIMAL NOT NULL DEFAULT 0,
    "incoming" DECIMAL NOT NULL DEFAULT 0,
    "credit_limit" DECIMAL NOT NULL DEFAULT 0,
    "credit_limit_set" BOOLEAN NOT NULL DEFAULT false,
    "entry_count" BIGINT NOT NULL DEFAULT 0,
    "last_entry_at" TIMESTAMPTZ(3),

    CONSTRAINT "balances_pkey" PRIMARY KEY ("merchant_id","currency")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "merchant_id" UUID NOT NULL,
    "currency" VARCHAR(10) NOT NULL,
    "balance_seq" BIGINT NOT NULL,
    "id" UUID NOT NULL,
    "kind" "ledger_entry_kind" NOT NULL,
    "debit_account" "ledger_account" NOT NULL,
    "credit_account" "ledger_account" NOT NULL,
    "amount" DECIMAL NOT NULL,
    "available" DECIMAL NOT NULL,
    "held" DECIMAL NOT NULL,
    "incoming" DECIMAL NOT NULL,
    "transaction_id" UUID,
    "reason" TEXT,
    "reference" VARCHAR(128),
    "actor" VARCHAR(200),
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("merchant_id","currency","balance_seq")
);

-- CreateIndex
CREATE INDEX "ledger_entries_merchant_id_currency_created_at_balance_seq_idx" ON "ledger_entries"("merchant_id", "currency", "created_at" DESC, "balance_seq" DESC);

-- CreateIndex
CREATE INDEX "ledger_entries_merchant_id_created_at_currency_balance_seq_idx" ON "ledger_entries"("merchant_id", "created_at" DESC, "currency" DESC, "balance_seq" DESC);

-- AddForeignKey
ALTER TABLE "balances" ADD CONSTRAINT "balances_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Amounts: an entry moves a positive amount between two different accounts; limits are never negative.
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_credit_limit_check" CHECK ("credit_limit" >= 0);
ALTER TABLE "balances" ADD CONSTRAINT "balances_credit_limit_check" CHECK ("credit_limit" >= 0);
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_amount_check" CHECK ("amount" > 0);
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_accounts_check" CHECK ("debit_account" <> "credit_account");
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_balance_seq_check" CHECK ("balance_seq" >= 1);

-- A transaction's entry of each kind is written once (a status change replayed, a retried batch),
-- and this index is also the way to a transaction's entries (its detail view).
CREATE UNIQUE INDEX "ledger_entries_transaction_kind_key" ON "ledger_entries"("transaction_id", "kind") WHERE "transaction_id" IS NOT NULL;
-- An operator's adjustment is idempotent by its reference, per merchant.
CREATE UNIQUE INDEX "ledger_entries_merchant_reference_key" ON "ledger_entries"("merchant_id", "reference") WHERE "reference" IS NOT NULL;

-- Append-only: nothing updates, deletes or truncates an entry; a correction is a new entry.
CREATE FUNCTION "ledger_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only: % refused (a correction is a new entry)', TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER "ledger_entries_append_only" BEFORE UPDATE OR DELETE OR TRUNCATE ON "ledger_entries"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_entries_append_only"();

-- The entry a transaction's status writes, the one place this is said (the create and status
-- statements, the backfill below and ledger:verify all use it): the amount leaves `debit` and
-- enters `credit`. `processing` moves no money: no row.
CREATE FUNCTION "ledger_move"("type" "transaction_type", "status" "transaction_status",
                              OUT "kind" "ledger_entry_kind", OUT "debit" "ledger_account", OUT "credit" "ledger_account")
RETURNS SETOF record LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT m.kind::ledger_entry_kind, m.debit::ledger_account, m.credit::ledger_account
  FROM (VALUES
    ('deposit',  'pending',   'deposit.pending',    'external:deposits', 'incoming'),
    ('deposit',  'completed', 'deposit.completed',  'incoming',          'available'),
    ('deposit',  'failed',    'deposit.failed',     'incoming',          'external:deposits'),
    ('withdraw', 'pending',   'withdraw.hold',      'available',         'held'),
    ('withdraw', 'completed', 'withdraw.completed', 'held',              'external:withdrawals'),
    ('withdraw', 'failed',    'withdraw.release',   'held',              'available')
  ) AS m(type, status, kind, debit, credit)
  WHERE m.type = $1::text AND m.status = $2::text
$$;

-- How an entry changes one account: +amount into credit, -amount out of debit, 0 otherwise.
CREATE FUNCTION "ledger_change"("debit" "ledger_account", "credit" "ledger_account", "amount" numeric, "account" "ledger_account")
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN $2 = $4 THEN $3 WHEN $1 = $4 THEN -$3 ELSE 0 END
$$;

-- Every entry as its two postings (debit negative, credit positive): per currency they sum to zero.
CREATE VIEW "ledger_postings" AS
  SELECT merchant_id, currency, balance_seq, kind, debit_account AS account, -amount AS amount, created_at FROM ledger_entries
  UNION ALL
  SELECT merchant_id, currency, balance_seq, kind, credit_account AS account, amount, created_at FROM ledger_entries;

-- Backfill: every transaction made before the ledger, entered once as if the ledger had been there:
-- its creation's entry at created_at and, when final, its settlement's at updated_at. Balances are the
-- sums; a historical withdraw may leave available negative (new ones are refused until it is not).
WITH steps AS (
  SELECT t.merchant_id, t.currency, t.id AS transaction_id, t.amount, mv.kind, mv.debit, mv.credit, s.at, s.step
  FROM transactions t
  CROSS JOIN LATERAL (VALUES ('pending'::transaction_status, t.created_at, 0), (t.status, t.updated_at, 1)) AS s(status, at, step)
  CROSS JOIN LATERAL ledger_move(t.type, s.status) mv
  WHERE s.step = 0 OR t.status IN ('completed', 'failed')
),
chained AS (
  SELECT st.*,
         row_number() OVER w AS balance_seq,
         sum(ledger_change(st.debit, st.credit, st.amount, 'available')) OVER w AS available,
         sum(ledger_change(st.debit, st.credit, st.amount, 'held')) OVER w AS held,
         sum(ledger_change(st.debit, st.credit, st.amount, 'incoming')) OVER w AS incoming
  FROM steps st
  WINDOW w AS (PARTITION BY st.merchant_id, st.currency ORDER BY st.at, st.transaction_id, st.step ROWS UNBOUNDED PRECEDING)
),
entered AS (
  INSERT INTO ledger_entries (merchant_id, currency, balance_seq, id, kind, debit_account, credit_account, amount,
                              available, held, incoming, transaction_id, reason, created_at)
  SELECT merchant_id, currency, balance_seq, uuid_v7(), kind, debit, credit, amount, available, held, incoming,
         transaction_id, 'entered by the migration that added the ledger', at
  FROM chained
  RETURNING merchant_id, currency, balance_seq, available, held, incoming, created_at
)
INSERT INTO balances (merchant_id, currency, available, held, incoming, entry_count, last_entry_at)
SELECT DISTINCT ON (merchant_id, currency) merchant_id, currency, available, held, incoming, balance_seq, created_at
FROM entered
ORDER BY merchant_id, currency, balance_seq DESC;
