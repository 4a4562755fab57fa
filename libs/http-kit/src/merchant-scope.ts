/**
 * The one hook an internal service puts in front of a route tree that acts for a merchant (or, for
 * token resolution, for the gateway itself). It accepts the merchant id in x-merchant-id only with
 * a valid x-internal-auth proof of this very request (internal-auth.ts): a caller that reaches the
 * service directly and names a merchant gets 401 and changes nothing. Handlers never check it.
 */
import { HEADER_MERCHANT_ID } from '@dw/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors';
import { HEADER_INTERNAL_AUTH, type InternalAuth } from './internal-auth';

// Lower-case, as the gateway sends it and as transactions-svc accepts it.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

declare module 'fastify' {
  interface FastifyRequest {
    merchantId: string;
  }
}

const notFromGateway = () =>
  new ApiError(401, 'unauthorized', 'This service answers only requests that come through the API gateway.');

function proven(auth: InternalAuth, request: FastifyRequest, merchantId: string): boolean {
  return auth.verify(request.headers[HEADER_INTERNAL_AUTH], {
    method: request.method,
    path: request.raw.url ?? request.url,
    merchantId,
    requestId: String(request.id),
  });
}

export function requireMerchant(app: FastifyInstance, auth: InternalAuth): void {
  app.decorateRequest('merchantId', '');
  app.addHook('onRequest', async (request) => {
    const id = request.headers[HEADER_MERCHANT_ID];
    if (typeof id !== 'string' || !UUID.test(id) || !proven(auth, request, id)) throw notFromGateway();
    request.merchantId = id;
  });
}

/** For internal routes that act for no merchant (token resolution): the proof alone. */
export function requireInternalCaller(app: FastifyInstance, auth: InternalAuth): void {
  app.addHook('onRequest', async (request) => {
    if (request.headers[HEADER_MERCHANT_ID] !== undefined || !proven(auth, request, '')) throw notFromGateway();
  });
}
