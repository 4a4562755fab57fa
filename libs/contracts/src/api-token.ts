import { hash } from 'node:crypto';

/**
 * The shape of every API token the merchant CLI issues: `dwk_` + base64url of 32 random bytes.
 * The gateway refuses anything else before any lookup, so junk costs no round trip.
 */
export const API_TOKEN_PREFIX = 'dwk_';
export const API_TOKEN_PATTERN = /^dwk_[A-Za-z0-9_-]{43}$/;

/**
 * The digest a token is known by: lowercase hex SHA-256 of its UTF-8 bytes. merchants.api_token_hash
 * holds it (the token itself is never stored), and the gateway sends it, not the token, to
 * transactions-svc's POST /internal/auth/resolve. A plain hash suffices: tokens carry 256 random bits.
 */
export const apiTokenHash = (token: string): string => hash('sha256', token, 'hex');
