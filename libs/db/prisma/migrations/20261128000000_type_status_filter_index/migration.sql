-- The list's and the export's `type` and `status` filters together read the rows they return
-- (docs/decisions.md, "Reads that do not grow with history"): through the type index or the status
-- index alone, `type=deposit&status=failed` for a merchant with many deposits and many failed
-- withdraws walked one of those sets to find its few failed deposits. Plain CREATE INDEX (the
-- migration runs in a transaction): it blocks writes to transactions while it builds; docs/deploy.md
-- says what that costs on a big table.

-- CreateIndex
CREATE INDEX "transactions_merchant_id_type_status_created_at_id_idx" ON "transactions"("merchant_id", "type", "status", "created_at" DESC, "id" DESC);

-- How many of a merchant's transactions have each status, as one distribution: without it the
-- planner multiplied the two columns' frequencies, judged that a merchant with most of the rows had
-- many pending ones, and read the sandbox settler's index of every merchant's pending transactions
-- backwards, filtering on the merchant, to find a page of them. ANALYZE fills it now (it samples a
-- fixed number of rows, whatever the table's size); autovacuum keeps it current.
CREATE STATISTICS "transactions_merchant_id_status_stats" (mcv) ON "merchant_id", "status" FROM "transactions";
ANALYZE "transactions";
