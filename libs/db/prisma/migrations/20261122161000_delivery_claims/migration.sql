-- One attempt chain per event: callback-svc claims (event, attempt) on the delivery row before it
-- sends, so a second copy of a message (a lost ack, an outbox row published twice) finds the
-- attempt taken and sends nothing. The claim is a lease: a claimant that died mid-send lets the
-- next copy take over once claimed_until has passed.

-- AlterTable
ALTER TABLE "callback_deliveries" ADD COLUMN     "claimed_attempt" INTEGER,
ADD COLUMN     "claimed_until" TIMESTAMPTZ(3);

-- DropIndex
DROP INDEX "callback_attempts_event_id_attempt_idx";

-- CreateIndex
CREATE UNIQUE INDEX "callback_attempts_event_id_attempt_key" ON "callback_attempts"("event_id", "attempt");
