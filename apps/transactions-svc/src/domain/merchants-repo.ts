/** Merchant settings and token resolution. */
import type { CallbackUrls, TransactionTypeName } from '@dw/contracts';
import type pg from 'pg';
import { query, raw, sql } from '@dw/db';

const URLS = raw('deposit_callback_url AS "depositCallbackUrl", withdraw_callback_url AS "withdrawCallbackUrl"');
/** The column a type's URL lives in: from this closed list, never from input. */
const URL_COLUMN = { deposit: raw('deposit_callback_url'), withdraw: raw('withdraw_callback_url') } as const;

export async function getCallbackUrls(db: pg.Pool, merchantId: string): Promise<CallbackUrls | undefined> {
  const [urls] = await query<CallbackUrls>(db, sql`SELECT ${URLS} FROM merchants WHERE id = ${merchantId}::uuid`);
  return urls;
}

export async function setCallbackUrl(
  db: pg.Pool,
  merchantId: string,
  type: TransactionTypeName,
  url: string | null,
): Promise<CallbackUrls | undefined> {
  const update = sql`
    UPDATE merchants SET ${URL_COLUMN[type]} = ${url}::text, updated_at = now()
     WHERE id = ${merchantId}::uuid
    RETURNING ${URLS}`;
  const [urls] = await query<CallbackUrls>(db, update);
  return urls;
}

/** The merchant whose token hashes to tokenHash (hex SHA-256), if any. */
export async function merchantIdForTokenHash(db: pg.Pool, tokenHash: string): Promise<string | undefined> {
  const [merchant] = await query<{ id: string }>(db, sql`SELECT id FROM merchants WHERE api_token_hash = ${tokenHash}`);
  return merchant?.id;
}
