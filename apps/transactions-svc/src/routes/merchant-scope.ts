/**
 * The gateway authenticates the merchant and forwards its id in x-merchant-id; every /api route is
 * scoped to that merchant. Only the gateway can reach this service (NetworkPolicy in k8s/).
 */
import { HEADER_MERCHANT_ID } from '@dw/contracts';
import { unauthorized } from '@dw/http-kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

declare module 'fastify' {
  interface FastifyRequest {
    merchantId: string;
  }
}

export function requireMerchant(app: FastifyInstance): void {
  app.decorateRequest('merchantId', '');
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const id = request.headers[HEADER_MERCHANT_ID];
    if (typeof id !== 'string' || !UUID.test(id)) throw unauthorized();
    request.merchantId = id;
  });
}
