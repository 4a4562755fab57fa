// Merchant credentials: the API token (only its hash is stored) and the callback signing secret
// (stored in clear, since callback-svc signs with it). Pure functions, shared by the merchant CLI
// and the HTTP side, which hashes the presented token to find the merchant.
import { createHash, randomBytes } from 'node:crypto';
import { API_TOKEN_PREFIX } from '@dw/contracts';

const SECRET_PREFIX = 'whsec_';

/** A new API token: `dwk_` + base64url of 32 random bytes (256 bits, so a plain hash suffices); API_TOKEN_PATTERN. */
export function newApiToken(): string {
  return API_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** What merchants.api_token_hash holds for `token`: lowercase hex SHA-256 of its UTF-8 bytes. */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new callback signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}
