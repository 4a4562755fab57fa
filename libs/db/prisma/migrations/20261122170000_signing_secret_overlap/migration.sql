-- Signing-secret rotation with overlap: the secret in force before the last rotation keeps
-- signing beside the new one until previous_signing_secret_expires_at (CONTRACT 5).
ALTER TABLE "merchants" ADD COLUMN "previous_signing_secret" TEXT,
ADD COLUMN "previous_signing_secret_expires_at" TIMESTAMPTZ(3);
