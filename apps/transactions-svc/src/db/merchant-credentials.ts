// Merchant credentials: the API token (only its hash is stored: apiTokenHash of @dw/contracts) and
// the callback signing secret (stored in clear, since callback-svc signs with it). Pure functions,
// used by the merchant CLI.
import { randomBytes } from 'node:crypto';
import { API_TOKEN_PREFIX } from '@dw/contracts';

const SECRET_PREFIX = 'whsec_';

/** A new API token: `dwk_` + base64url of 32 random bytes (256 bits, so a plain hash suffices); API_TOKEN_PATTERN. */
export function newApiToken(): string {
  return API_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** A new callback signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}
