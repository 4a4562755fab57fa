/**
 * The shape of every API token the merchant CLI issues: `dwk_` + base64url of 32 random bytes.
 * The gateway refuses anything else before any lookup, so junk costs no round trip.
 */
export const API_TOKEN_PREFIX = 'dwk_';
export const API_TOKEN_PATTERN = /^dwk_[A-Za-z0-9_-]{43}$/;
