import type { FastifyReply } from 'fastify';

/** No inline script or style anywhere: the pages load only /ui/assets/app.js and app.css. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const HTML_CONTENT_TYPE = 'text/html; charset=utf-8';

/** Headers of every HTML page; `cache` differs between merchant data and the static shell. */
export function htmlHeaders(cache: string): Record<string, string> {
  return {
    'content-type': HTML_CONTENT_TYPE,
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': cache,
  };
}

export function sendHtml(reply: FastifyReply, status: number, body: string, cache: string): FastifyReply {
  return reply.code(status).headers(htmlHeaders(cache)).send(body);
}
