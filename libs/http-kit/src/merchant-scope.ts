/**
 * The gateway authenticates the merchant's token and forwards its id in x-merchant-id; every data
 * route of the service using this hook is scoped to that merchant. Anything else is refused with 401.
 * Only the gateway can reach these services (NetworkPolicy in k8s/), and it strips the header a
 * client sends.
 */
import { HEADER_MERCHANT_ID } from '@dw/contracts';
import { unauthorized } from './errors';
import type { FastifyInstance } from 'fastify';

// Lower-case, as the gateway sends it and as transactions-svc accepts it.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

declare module 'fastify' {
  interface FastifyRequest {
    merchantId: string;
  }
}

export function requireMerchant(app: FastifyInstance): void {
  app.decorateRequest('merchantId', '');
  app.addHook('onRequest', async (request) => {
    const id = request.headers[HEADER_MERCHANT_ID];
    if (typeof id !== 'string' || !UUID.test(id)) throw unauthorized();
    request.merchantId = id;
  });
}
