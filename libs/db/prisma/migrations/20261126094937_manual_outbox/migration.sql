-- The manual lane's outbox (issue 7): recoveries and redeliveries write their rows here instead of
-- into outbox, so the relay, which takes a batch from each table in turn, never publishes a
-- recovery of 10,000 rows in front of the events created after it. Rows are deleted once
-- published, as in outbox: the table holds only what is still to be published.

-- CreateTable
CREATE TABLE "manual_outbox" (
    "id" BIGSERIAL NOT NULL,
    "event_id" VARCHAR(64) NOT NULL,
    "routing_key" VARCHAR(64) NOT NULL,
    "payload" JSONB NOT NULL,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "manual_outbox_pkey" PRIMARY KEY ("id")
);
