-- Endpoint health and the viewer read a merchant's events of the last 24 hours: find them by
-- (merchant_id, created_at) instead of scanning every event.
CREATE INDEX "transaction_events_merchant_id_created_at_idx" ON "transaction_events"("merchant_id", "created_at");
