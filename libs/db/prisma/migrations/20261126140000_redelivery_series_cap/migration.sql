-- The series a merchant started for one event (redeliverCallback, recoverCallbacks): capped
-- (REDELIVERY_MAX_SERIES, default 10), so no event gathers attempts without end. Adding a column
-- with a constant default rewrites nothing (PostgreSQL 11+).

-- AlterTable
ALTER TABLE "callback_deliveries" ADD COLUMN     "manual_series" INTEGER NOT NULL DEFAULT 0;
