/**
 * An HTTP/1.1 request carries exactly one Host header (RFC 9112 §3.2: a server MUST answer 400 to
 * none or more than one). Node's own check of a missing Host answered a bare 400 with no body and
 * no request id, and it lets a second Host through (the first wins, where a proxy in front may have
 * routed by the last). So Node's check is off (create-service.ts, `requireHostHeader: false`) and
 * this one answers both as every other refusal is answered: 400 problem+json with the request id.
 * HTTP/1.0 may omit Host.
 */
import type { IncomingMessage } from 'node:http';

/** What is wrong with the request's Host headers, as the problem's message; undefined when nothing is. */
export function hostHeaderFault(req: IncomingMessage): string | undefined {
  if (req.httpVersion !== '1.1') return undefined;
  if (req.headers.host === undefined) return 'is required once in an HTTP/1.1 request';
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1) return 'must be sent once, not more';
  }
  return undefined;
}
