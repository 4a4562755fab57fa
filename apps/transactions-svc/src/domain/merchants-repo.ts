/** Merchant settings and token resolution. */
import type { CallbackUrls, TransactionTypeName } from '@dw/contracts';
import type { PrismaClient } from '../generated/prisma/client';

export async function getCallbackUrls(db: PrismaClient, merchantId: string): Promise<CallbackUrls | undefined> {
  const m = await db.merchant.findUnique({
    where: { id: merchantId },
    select: { depositCallbackUrl: true, withdrawCallbackUrl: true },
  });
  return m ?? undefined;
}

export async function setCallbackUrl(
  db: PrismaClient,
  merchantId: string,
  type: TransactionTypeName,
  url: string | null,
): Promise<CallbackUrls | undefined> {
  const field = type === 'deposit' ? 'depositCallbackUrl' : 'withdrawCallbackUrl';
  const updated = await db.merchant.updateManyAndReturn({
    where: { id: merchantId },
    data: { [field]: url, updatedAt: new Date() },
    select: { depositCallbackUrl: true, withdrawCallbackUrl: true },
  });
  return updated[0];
}

/** The merchant whose token hashes to tokenHash (hex SHA-256), if any. */
export async function merchantIdForTokenHash(db: PrismaClient, tokenHash: string): Promise<string | undefined> {
  const m = await db.merchant.findUnique({ where: { apiTokenHash: tokenHash }, select: { id: true } });
  return m?.id;
}
