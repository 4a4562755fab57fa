/** GET /ui/endpointHealth: the merchant's callback endpoints over the last 24 h, as JSON or HTML. */
import { negotiate } from '@dw/http-kit';
import { PROBLEM_CONTENT_TYPE } from '@dw/contracts';
import type { FastifyInstance } from 'fastify';
import type { Assets } from '../assets';
import { wantsFragment } from '../fragment';
import { healthFragment, renderHealthPage } from '../html/health-page';
import { sendHtml } from '../security-headers';
import type { TransactionsClient } from '../transactions-client';

/** Registered in the scope of viewTransactionRoutes, whose hooks (merchant, no-store) apply. */
export function endpointHealthRoutes(app: FastifyInstance, client: TransactionsClient, assets: Assets): void {
  app.get('/ui/endpointHealth', async (request, reply) => {
    const result = await client.health({ merchantId: request.merchantId, requestId: String(request.id) });
    if (!result.ok) return reply.code(result.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(result.problem));
    if (negotiate(request.headers.accept) === 'html') {
      const body = wantsFragment(request) ? healthFragment(result.body).value : renderHealthPage(assets, result.body);
      return sendHtml(reply, 200, body, 'no-store');
    }
    return reply.send(result.body);
  });
}
