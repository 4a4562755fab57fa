/**
 * A client asking for HTML gets errors as a small HTML page with the same status and facts as the
 * problem+json body. Done in onSend, so every problem of the route tree (401 from the merchant
 * hook, 400 from validation, a problem passed through from transactions-svc, 503) goes through the
 * one code path that builds the JSON, and the page cannot drift from it.
 */
import { negotiate } from '@dw/http-kit';
import type { Problem } from '@dw/contracts';
import type { FastifyInstance } from 'fastify';
import type { Assets } from '../assets';
import { wantsFragment } from '../fragment';
import { errorFragment, renderErrorPage } from '../html/error-page';
import { htmlHeaders } from '../security-headers';

export function htmlProblems(app: FastifyInstance, assets: Assets): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('application/problem+json') || typeof payload !== 'string') return payload;
    if (negotiate(request.headers.accept) !== 'html') return payload;
    reply.headers(htmlHeaders('no-store'));
    const problem = JSON.parse(payload) as Problem;
    return wantsFragment(request) ? errorFragment(problem).value : renderErrorPage(assets, problem);
  });
}
