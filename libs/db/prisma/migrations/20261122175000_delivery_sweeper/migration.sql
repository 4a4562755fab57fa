-- The sweeper (callback-svc) looks for pending or retrying deliveries that nothing has been seen of
-- for minutes. This index holds open deliveries only, so the look-up stays as small as the work in
-- flight however many deliveries have settled.
CREATE INDEX "callback_deliveries_open_updated_at_idx" ON "callback_deliveries"("updated_at") WHERE "status" IN ('pending', 'retrying');
