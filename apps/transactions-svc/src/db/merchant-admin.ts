// Issuing and rotating merchant credentials in the database (used by the merchant CLI).
// Every operation returns the credentials to show once; only the token's hash is stored.
import { randomUUID } from 'node:crypto';
import { hashApiToken, newApiToken, newSigningSecret } from './merchant-credentials';
import { SECRET_OVERLAP_DEFAULT_SECONDS } from '@dw/contracts';
import { Prisma, type PrismaClient } from './prisma';

export type IssuedCredentials = {
  merchantId: string;
  /** Absent after rotate-secret: the token in force is known only by its hash. */
  apiToken?: string;
  callbackSigningSecret: string;
};

export async function createMerchant(prisma: PrismaClient, name: string): Promise<IssuedCredentials> {
  const apiToken = newApiToken();
  const callbackSigningSecret = newSigningSecret();
  const merchant = await prisma.merchant.create({
    data: { id: randomUUID(), name, apiTokenHash: hashApiToken(apiToken), callbackSigningSecret },
    select: { id: true },
  });
  return { merchantId: merchant.id, apiToken, callbackSigningSecret };
}

/** Replaces the merchant's token; the old one stops matching at once. Null: no such merchant. */
export async function rotateApiToken(prisma: PrismaClient, merchantId: string): Promise<IssuedCredentials | null> {
  const apiToken = newApiToken();
  const updated = await updateMerchant(prisma, merchantId, { apiTokenHash: hashApiToken(apiToken) });
  return updated && { merchantId, apiToken, callbackSigningSecret: updated.callbackSigningSecret };
}

/**
 * Replaces the merchant's callback signing secret. The secret it replaces keeps signing beside it
 * for `overlapSeconds` (0: revoked at once); a secret kept from an earlier rotation is dropped, so
 * at most two secrets ever sign. One UPDATE, with the database's clock, so the expiry agrees with
 * callback-svc's `now()`. Null: no such merchant.
 */
export async function rotateSigningSecret(
  prisma: PrismaClient,
  merchantId: string,
  overlapSeconds: number = SECRET_OVERLAP_DEFAULT_SECONDS,
): Promise<IssuedCredentials | null> {
  const callbackSigningSecret = newSigningSecret();
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    UPDATE merchants
       SET previous_signing_secret = CASE WHEN ${overlapSeconds}::int > 0 THEN callback_signing_secret END,
           previous_signing_secret_expires_at = CASE WHEN ${overlapSeconds}::int > 0 THEN now() + make_interval(secs => ${overlapSeconds}::int) END,
           callback_signing_secret = ${callbackSigningSecret},
           updated_at = now()
     WHERE id = ${merchantId}::uuid
     RETURNING id`;
  return rows.length ? { merchantId, callbackSigningSecret } : null;
}

async function updateMerchant(
  prisma: PrismaClient,
  id: string,
  data: { apiTokenHash?: string; callbackSigningSecret?: string },
): Promise<{ callbackSigningSecret: string } | null> {
  try {
    return await prisma.merchant.update({ where: { id }, data: { ...data, updatedAt: new Date() }, select: { callbackSigningSecret: true } });
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return null;
    throw error;
  }
}
