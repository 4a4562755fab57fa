-- Reads whose cost grew with history (issue 16), made independent of it:
-- * the viewer's and the export's `status` filter walks (merchant_id, status, created_at, id): a
--   page of failed transactions reads those rows, not every transaction of the merchant;
-- * recoverCallbacks finds the merchant's failed and skipped deliveries of its window through
--   unsuccessful_deliveries instead of scanning every merchant's callback_deliveries of all time.
-- Plain CREATE INDEX (the migration runs in a transaction, where CONCURRENTLY cannot): it blocks
-- writes to transactions while it builds, and the triggers' creation blocks writes to
-- callback_deliveries and transaction_events until the commit; docs/deploy.md says what that costs
-- on a big table.

-- CreateTable
CREATE TABLE "unsuccessful_deliveries" (
    "event_id" VARCHAR(64) NOT NULL,
    "merchant_id" UUID NOT NULL,
    "kind" "transaction_type" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "unsuccessful_deliveries_pkey" PRIMARY KEY ("event_id")
);

-- CreateIndex
CREATE INDEX "unsuccessful_deliveries_merchant_id_created_at_event_id_idx" ON "unsuccessful_deliveries"("merchant_id", "created_at", "event_id");

-- CreateIndex
CREATE INDEX "unsuccessful_deliveries_merchant_id_kind_created_at_event_i_idx" ON "unsuccessful_deliveries"("merchant_id", "kind", "created_at", "event_id");

-- CreateIndex
CREATE INDEX "transactions_merchant_id_status_created_at_id_idx" ON "transactions"("merchant_id", "status", "created_at" DESC, "id" DESC);

-- ---------------------------------------------------------------------------------------------
-- Hand-written below: schema.prisma cannot express triggers (Prisma's diff ignores them).
-- ---------------------------------------------------------------------------------------------

-- unsuccessful_deliveries holds exactly the deliveries whose status is failed or skipped, with
-- their event's merchant, kind and time. The triggers fire only for a row that enters or leaves
-- that set (the WHEN clauses), so a create, a claim or a succeeded attempt calls nothing; no writer
-- of callback_deliveries (transactions-svc, callback-svc, the retention job) has to know the table.
CREATE FUNCTION "unsuccessful_deliveries_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.status NOT IN ('failed', 'skipped') THEN
    DELETE FROM unsuccessful_deliveries WHERE event_id = OLD.event_id;
  ELSE
    INSERT INTO unsuccessful_deliveries (event_id, merchant_id, kind, created_at)
    SELECT e.id, e.merchant_id, split_part(e.type, '.', 1)::transaction_type, e.created_at
      FROM transaction_events e WHERE e.id = NEW.event_id
    ON CONFLICT (event_id) DO NOTHING;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "unsuccessful_deliveries_on_insert" AFTER INSERT ON "callback_deliveries"
  FOR EACH ROW WHEN (NEW.status IN ('failed', 'skipped'))
  EXECUTE FUNCTION "unsuccessful_deliveries_sync"();

CREATE TRIGGER "unsuccessful_deliveries_on_status" AFTER UPDATE OF "status" ON "callback_deliveries"
  FOR EACH ROW WHEN ((NEW.status IN ('failed', 'skipped')) IS DISTINCT FROM (OLD.status IN ('failed', 'skipped')))
  EXECUTE FUNCTION "unsuccessful_deliveries_sync"();

CREATE TRIGGER "unsuccessful_deliveries_on_delete" AFTER DELETE ON "callback_deliveries"
  FOR EACH ROW WHEN (OLD.status IN ('failed', 'skipped'))
  EXECUTE FUNCTION "unsuccessful_deliveries_sync"();

-- An event's merchant, type and time never change in the product; should an operator (or a test)
-- rewrite them, the copy follows. Fires only for an UPDATE that names one of these columns.
CREATE FUNCTION "unsuccessful_deliveries_follow_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE unsuccessful_deliveries
     SET merchant_id = NEW.merchant_id, kind = split_part(NEW.type, '.', 1)::transaction_type, created_at = NEW.created_at
   WHERE event_id = NEW.id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "unsuccessful_deliveries_follow_event" AFTER UPDATE OF "merchant_id", "type", "created_at" ON "transaction_events"
  FOR EACH ROW WHEN ((OLD.merchant_id, OLD.type, OLD.created_at) IS DISTINCT FROM (NEW.merchant_id, NEW.type, NEW.created_at))
  EXECUTE FUNCTION "unsuccessful_deliveries_follow_event"();

-- The deliveries that are failed or skipped now: one scan of callback_deliveries, at the upgrade.
INSERT INTO "unsuccessful_deliveries" ("event_id", "merchant_id", "kind", "created_at")
SELECT e.id, e.merchant_id, split_part(e.type, '.', 1)::transaction_type, e.created_at
  FROM callback_deliveries d JOIN transaction_events e ON e.id = d.event_id
 WHERE d.status IN ('failed', 'skipped');
