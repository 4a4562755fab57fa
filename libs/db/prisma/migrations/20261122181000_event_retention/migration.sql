-- The retention job (EVENT_RETENTION_DAYS) removes the oldest events first, in small batches: it
-- finds them by created_at through this index instead of scanning the history.
CREATE INDEX "transaction_events_created_at_idx" ON "transaction_events"("created_at");
