-- The sandbox settler looks for pending transactions by age four times a second; without an
-- index that fits it scanned every transaction ever made. This one holds pending rows only, so
-- it stays as small as the work waiting.
CREATE INDEX "transactions_pending_created_at_idx" ON "transactions"("created_at") WHERE "status" = 'pending';
