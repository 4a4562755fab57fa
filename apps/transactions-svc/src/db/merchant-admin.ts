// Issuing and rotating merchant credentials in the database (the merchant CLI; the service's
// rotateCallbackSecret route uses rotateSigningSecret). Every operation returns the credentials to
// show once; only the token's hash is stored.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { apiTokenHash, SECRET_OVERLAP_DEFAULT_SECONDS } from '@dw/contracts';
import { newApiToken, newSigningSecret } from './merchant-credentials';
import { query, sql } from '@dw/db';

/** What an operation shows, once: each credential only when it is new (null: unchanged, and not shown again). */
export type IssuedCredentials = {
  merchantId: string;
  /** null after rotate-secret: the token in force is known only by its hash (and keeps working). */
  apiToken: string | null;
  /** null after rotate-token: the secret in force was shown when it was issued, and keeps signing. */
  callbackSigningSecret: string | null;
};

export async function createMerchant(db: pg.Pool, name: string, creditLimit = '0'): Promise<IssuedCredentials> {
  const apiToken = newApiToken();
  const callbackSigningSecret = newSigningSecret();
  const merchantId = randomUUID();
  const insert = sql`
    INSERT INTO merchants (id, name, api_token_hash, callback_signing_secret, credit_limit)
    VALUES (${merchantId}::uuid, ${name}, ${apiTokenHash(apiToken)}, ${callbackSigningSecret}, ${creditLimit}::numeric)`;
  await query(db, insert);
  return { merchantId, apiToken, callbackSigningSecret };
}

/** Replaces the merchant's token; the old one stops matching at once. Null: no such merchant. */
export async function rotateApiToken(db: pg.Pool, merchantId: string): Promise<IssuedCredentials | null> {
  const apiToken = newApiToken();
  const update = sql`
    UPDATE merchants SET api_token_hash = ${apiTokenHash(apiToken)}, updated_at = now()
     WHERE id = ${merchantId}::uuid
    RETURNING id`;
  const rows = await query<{ id: string }>(db, update);
  return rows.length ? { merchantId, apiToken, callbackSigningSecret: null } : null;
}

/**
 * Replaces the merchant's callback signing secret. The secret it replaces keeps signing beside it
 * for `overlapSeconds` (0: revoked at once); a secret kept from an earlier rotation is dropped, so
 * at most two secrets ever sign. One UPDATE, with the database's clock, so the expiry agrees with
 * callback-svc's `now()`. Null: no such merchant.
 */
export async function rotateSigningSecret(
  db: pg.Pool,
  merchantId: string,
  overlapSeconds: number = SECRET_OVERLAP_DEFAULT_SECONDS,
): Promise<IssuedCredentials | null> {
  const callbackSigningSecret = newSigningSecret();
  const update = sql`
    UPDATE merchants
       SET previous_signing_secret = CASE WHEN ${overlapSeconds}::int > 0 THEN callback_signing_secret END,
           previous_signing_secret_expires_at = CASE WHEN ${overlapSeconds}::int > 0 THEN now() + make_interval(secs => ${overlapSeconds}::int) END,
           callback_signing_secret = ${callbackSigningSecret},
           updated_at = now()
     WHERE id = ${merchantId}::uuid
     RETURNING id`;
  const rows = await query<{ id: string }>(db, update);
  return rows.length ? { merchantId, apiToken: null, callbackSigningSecret } : null;
}
