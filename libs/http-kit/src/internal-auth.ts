/**
 * Proof that a request to an internal service came through the gateway (or the ui, which acts for
 * the merchant the gateway authenticated). The caller adds
 *
 *   x-internal-auth: t=<unix seconds>,v1=<hex HMAC-SHA256>
 *
 * over the method, the exact path and query it sends, the merchant id (empty when it acts for no
 * merchant, as token resolution does) and the request id, keyed with the shared internal secret
 * (INTERNAL_AUTH_SECRETS). The receiver recomputes it with every configured secret, compares in
 * constant time and refuses a timestamp outside the freshness window, so a captured header is
 * worth little: it names one request of one merchant and expires within a minute.
 *
 * Rotation without downtime: deploy "new,old" everywhere (the first secret signs, every one
 * verifies), then "new" alone once every process runs with it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { HEADER_MERCHANT_ID, HEADER_REQUEST_ID } from '@dw/contracts';

export const HEADER_INTERNAL_AUTH = 'x-internal-auth';
/** How far a signature's timestamp may be from the receiver's clock (either way), in seconds. */
export const INTERNAL_AUTH_WINDOW_SECONDS = 60;

export interface InternalRequest {
  method: string;
  /** Path and query exactly as sent on the wire, e.g. `/api/transactions?limit=5`. */
  path: string;
  /** Empty when the caller acts for no merchant. */
  merchantId: string;
  requestId: string;
}

const HEADER_FORMAT = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/;

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

function mac(secret: string, t: number, req: InternalRequest): Buffer {
  // One field per line: none of them may hold a newline (ids are UUIDs or sane tokens, paths are
  // URL-encoded), so no two requests share a signed string.
  const payload = ['v1', t, req.method.toUpperCase(), canonicalPath(req.path), req.merchantId, req.requestId].join('\n');
  return createHmac('sha256', secret).update(payload, 'utf8').digest();
}

export class InternalAuth {
  constructor(
    private readonly secrets: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    if (secrets.length === 0) throw new Error('InternalAuth needs at least one secret');
  }

  /** The header value for one outgoing request, signed with the first secret. */
  sign(req: InternalRequest): string {
    const t = Math.floor(this.now() / 1000);
    return `t=${t},v1=${mac(this.secrets[0]!, t, req).toString('hex')}`;
  }

  /** The headers an internal caller adds: the proof plus the identity and request id it covers. */
  headers(req: InternalRequest): Record<string, string> {
    return {
      [HEADER_INTERNAL_AUTH]: this.sign(req),
      [HEADER_REQUEST_ID]: req.requestId,
      ...(req.merchantId ? { [HEADER_MERCHANT_ID]: req.merchantId } : {}),
    };
  }

  /** True only for a fresh signature of exactly this request by one of the configured secrets. */
  verify(header: unknown, req: InternalRequest): boolean {
    if (typeof header !== 'string') return false;
    const m = HEADER_FORMAT.exec(header);
    if (!m) return false;
    const t = Number(m[1]);
    if (Math.abs(this.now() / 1000 - t) > INTERNAL_AUTH_WINDOW_SECONDS) return false;
    const sent = Buffer.from(m[2]!, 'hex');
    let ok = false;
    // Every secret is tried (no early exit), so the time taken does not tell which one matched.
    for (const secret of this.secrets) ok = timingSafeEqual(mac(secret, t, req), sent) || ok;
    return ok;
  }
}
