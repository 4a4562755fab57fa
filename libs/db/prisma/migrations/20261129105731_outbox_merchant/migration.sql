-- Each outbox row names its merchant, so the relay can take each merchant's oldest rows in turn
-- rather than the table's oldest (apps/transactions-svc/src/outbox/relay-batch.ts). Taken in id
-- order alone, a merchant creating the largest rows the API admits at its rate limit held every
-- other merchant's new events behind its backlog in the table: their callbacks came up to 33 s
-- late (found by an outside audit). Nullable: rows written by a version from before the column,
-- while a rolling upgrade runs, carry none and are published as a merchant of their own.

-- AlterTable
ALTER TABLE "manual_outbox" ADD COLUMN     "merchant_id" UUID;

-- AlterTable
ALTER TABLE "outbox" ADD COLUMN     "merchant_id" UUID;

-- Rows waiting now: their merchant is already in the headers they are published with.
UPDATE "outbox" SET "merchant_id" = ("headers"->>'x-dw-merchant')::uuid
 WHERE "headers"->>'x-dw-merchant' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
UPDATE "manual_outbox" SET "merchant_id" = ("headers"->>'x-dw-merchant')::uuid
 WHERE "headers"->>'x-dw-merchant' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

-- CreateIndex
CREATE INDEX "manual_outbox_merchant_id_id_idx" ON "manual_outbox"("merchant_id", "id");

-- CreateIndex
CREATE INDEX "outbox_merchant_id_id_idx" ON "outbox"("merchant_id", "id");
