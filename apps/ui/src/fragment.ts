/**
 * /ui's script asks for a view's HTML with `x-ui-fragment: 1` and gets only the fragment the
 * no-script page would wrap in its layout: one set of templates renders both, so they cannot drift.
 */
import type { FastifyRequest } from 'fastify';

export const HEADER_UI_FRAGMENT = 'x-ui-fragment';

export function wantsFragment(request: FastifyRequest): boolean {
  return request.headers[HEADER_UI_FRAGMENT] === '1';
}
