-- The list's and the export's `type` filter read the rows they return, not the merchant's history
-- (docs/decisions.md, "Reads that do not grow with history"): without it, `type=withdraw` for a
-- merchant whose newest 300,000 transactions are deposits walked them all to reach its withdraws.
-- Plain CREATE INDEX (the migration runs in a transaction): it blocks writes to transactions while
-- it builds; docs/deploy.md says what that costs on a big table.

-- CreateIndex
CREATE INDEX "transactions_merchant_id_type_created_at_id_idx" ON "transactions"("merchant_id", "type", "created_at" DESC, "id" DESC);
