-- Redelivery (CONTRACT 4.7): a merchant starts a new series of attempts for a settled delivery.
-- The attempts of the current series are numbered series_start+1 … series_start+6, so attempt
-- numbers stay unique per event and the earlier attempts are kept beside the new ones. `trigger`
-- tells a series (and each attempt) started by the merchant from the automatic first one.

-- CreateEnum
CREATE TYPE "delivery_trigger" AS ENUM ('automatic', 'manual');

-- AlterTable
ALTER TABLE "callback_deliveries" ADD COLUMN     "series_start" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "trigger" "delivery_trigger" NOT NULL DEFAULT 'automatic';

-- AlterTable
ALTER TABLE "callback_attempts" ADD COLUMN     "trigger" "delivery_trigger" NOT NULL DEFAULT 'automatic';
