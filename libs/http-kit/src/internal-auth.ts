/**
 * Proof that a request to an internal service came through the gateway (or the ui, which acts for
 * the merchant the gateway authenticated). The caller adds
 *
 *   x-internal-auth: t=<unix seconds>,n=<nonce>,b=<hex SHA-256 of the body>,v2=<hex HMAC-SHA256>
 *
 * The HMAC, keyed with the shared internal secret (INTERNAL_AUTH_SECRETS), covers the timestamp, a
 * random nonce, the method, the exact path and query it sends, the merchant id (empty when it acts
 * for no merchant, as token resolution does), the request id and the digest of the exact body
 * bytes it sends (the empty body has a fixed digest, EMPTY_BODY_DIGEST). The receiver
 *
 * - recomputes the HMAC with every configured secret, compares in constant time and refuses a
 *   timestamp outside the freshness window (`check`, in an onRequest hook: merchant-scope.ts);
 * - hashes the raw body bytes it received, once, as its JSON parser reads them, and refuses a body
 *   whose digest is not the one proven (json-body.ts, merchant-scope.ts), before anything parses it;
 * - refuses a proof it has already accepted while the proof could still be fresh (replay-guard.ts).
 *   The nonce makes every signed request distinct, so two legitimate requests never share a proof,
 *   not even a client's retry with its own x-request-id within the same second.
 *
 * So a captured header is worth one request: exactly the one signed, body included, once. The
 * replay memory is per process: with several replicas of a receiver, a captured request can still
 * be played once more to each other replica within the window (docs/decisions.md, the trust model).
 *
 * Rotation without downtime (the first secret signs, every one verifies), three rollouts, each
 * finished everywhere before the next: "old,new" (every receiver learns the new one), "new,old" (it
 * signs), "new". Going straight to "new,old" would have new gateways sign with a secret that the
 * receivers not yet rolled refuse.
 */
import { createHmac, createSecretKey, hash, randomFillSync, timingSafeEqual, type KeyObject } from 'node:crypto';
import { HEADER_MERCHANT_ID, HEADER_REQUEST_ID } from '@dw/contracts';
import { ReplayGuard } from './replay-guard';

export const HEADER_INTERNAL_AUTH = 'x-internal-auth';
/** How far a signature's timestamp may be from the receiver's clock (either way), in seconds. */
export const INTERNAL_AUTH_WINDOW_SECONDS = 60;

/** The exact bytes of a body as sent (or received); undefined for a request without one. */
export type BodyBytes = string | Uint8Array | undefined;

export interface InternalRequest {
  method: string;
  /** Path and query exactly as sent on the wire, e.g. `/api/transactions?limit=5`. */
  path: string;
  /** Empty when the caller acts for no merchant. */
  merchantId: string;
  requestId: string;
  /** The exact body bytes sent (a string goes as UTF-8); none for a request without a body. */
  body?: BodyBytes;
}

/** What a valid header proves before the body has arrived. */
export interface Proof {
  /** When it was signed, in unix seconds (by the signer's clock). */
  t: number;
  /** The HMAC, hex: one signed request, what the replay guard remembers. */
  signature: string;
  /** SHA-256 (hex) of the body the signer sent: the body received must have the same. */
  bodyDigest: string;
}

/** SHA-256, hex, of exactly these bytes (one-shot `hash`: no Hash object per request). */
export function bodyDigest(body: BodyBytes): string {
  return hash('sha256', body ?? '', 'hex');
}

/** The digest signed for a request without a body. */
export const EMPTY_BODY_DIGEST = bodyDigest(undefined);

const HEADER_FORMAT = /^t=(\d{1,12}),n=([A-Za-z0-9_-]{22}),b=([0-9a-f]{64}),v2=([0-9a-f]{64})$/;

/**
 * The path as a WHATWG URL parser writes it (what the gateway's proxy puts on the wire), so the
 * signer and the receiver agree however the client spelled it (percent-encoding, dot segments).
 */
export function canonicalPath(path: string): string {
  try {
    const u = new URL(path.startsWith('//') ? `.${path}` : path, 'http://internal.invalid');
    return u.pathname + u.search;
  } catch {
    return path;
  }
}

const NONCE_BYTES = 16;
const noncePool = Buffer.allocUnsafe(NONCE_BYTES * 256);
let nonceOffset = noncePool.length;

/**
 * 16 bytes from the CSPRNG, base64url, each used once. Drawn from a pool refilled 256 nonces at a
 * time, as Node's randomUUID does: a randomBytes(16) per signed request was 1.8 % of the gateway's
 * CPU profile under a create load (its call into the CSPRNG, for 16 bytes).
 */
function randomNonce(): string {
  if (nonceOffset === noncePool.length) {
    randomFillSync(noncePool);
    nonceOffset = 0;
  }
  const nonce = noncePool.toString('base64url', nonceOffset, nonceOffset + NONCE_BYTES);
  nonceOffset += NONCE_BYTES;
  return nonce;
}

function mac(secret: KeyObject, t: number, nonce: string, digest: string, req: InternalRequest): Buffer {
  // One field per line: none of them may hold a newline (ids are UUIDs or sane tokens, paths are
  // URL-encoded, the nonce is base64url, the digest hex), so no two requests share a signed string.
  const payload = ['v2', t, nonce, req.method.toUpperCase(), canonicalPath(req.path), req.merchantId, req.requestId, digest].join('\n');
  return createHmac('sha256', secret).update(payload, 'utf8').digest();
}

export class InternalAuth {
  /** Proofs this process has accepted, while they could still be fresh (receivers only use it). */
  readonly replays: ReplayGuard;
  /** The secrets as HMAC keys, made once: createHmac with a KeyObject skips re-importing the key. */
  private readonly secrets: readonly KeyObject[];

  constructor(
    secrets: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    if (secrets.length === 0) throw new Error('InternalAuth needs at least one secret');
    this.secrets = secrets.map((secret) => createSecretKey(secret, 'utf8'));
    this.replays = new ReplayGuard(INTERNAL_AUTH_WINDOW_SECONDS, now);
  }

  /** The header value for one outgoing request (its body included), signed with the first secret. */
  sign(req: InternalRequest): string {
    const t = Math.floor(this.now() / 1000);
    const nonce = randomNonce();
    const digest = bodyDigest(req.body);
    return `t=${t},n=${nonce},b=${digest},v2=${mac(this.secrets[0]!, t, nonce, digest, req).toString('hex')}`;
  }

  /**
   * The headers an internal caller adds: the proof plus the identity and request id it covers.
   * Sign each request sent, retries included: a receiver accepts a proof once.
   */
  headers(req: InternalRequest): Record<string, string> {
    return {
      [HEADER_INTERNAL_AUTH]: this.sign(req),
      [HEADER_REQUEST_ID]: req.requestId,
      ...(req.merchantId ? { [HEADER_MERCHANT_ID]: req.merchantId } : {}),
    };
  }

  /**
   * The proof in `header` if it is a fresh signature of this request (method, path, merchant,
   * request id) by one of the configured secrets; its body is not known yet: whoever reads the
   * body must compare its digest with `bodyDigest`. Ignores `req.body`.
   */
  check(header: unknown, req: InternalRequest): Proof | undefined {
    if (typeof header !== 'string') return undefined;
    const m = HEADER_FORMAT.exec(header);
    if (!m) return undefined;
    const t = Number(m[1]);
    if (Math.abs(this.now() / 1000 - t) > INTERNAL_AUTH_WINDOW_SECONDS) return undefined;
    const sent = Buffer.from(m[4]!, 'hex');
    let ok = false;
    // Every secret is tried (no early exit), so the time taken does not tell which one matched.
    for (const secret of this.secrets) ok = timingSafeEqual(mac(secret, t, m[2]!, m[3]!, req), sent) || ok;
    return ok ? { t, signature: m[4]!, bodyDigest: m[3]! } : undefined;
  }

  /**
   * True only for a fresh signature of exactly this request, `req.body` included, by one of the
   * configured secrets. Does not remember it: see `replays` for that.
   */
  verify(header: unknown, req: InternalRequest): boolean {
    return this.check(header, req)?.bodyDigest === bodyDigest(req.body);
  }
}
