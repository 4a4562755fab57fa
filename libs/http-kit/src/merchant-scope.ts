/**
 * The one guard an internal service puts in front of a route tree that acts for a merchant (or, for
 * token resolution, for the gateway itself). It accepts the merchant id in x-merchant-id only with
 * a valid x-internal-auth proof of this very request (internal-auth.ts), body included, presented
 * for the first time: a caller that reaches the service directly and names a merchant, changes the
 * body of a captured request or replays one gets 401 and changes nothing. Handlers never check it.
 *
 * Three steps, each where its input first exists:
 * - onRequest: the header proves method, path, merchant, request id and the body's digest;
 * - the JSON parser (json-body.ts, via `refuseUnprovenBody`): the raw bytes have that digest,
 *   checked before they are parsed;
 * - preValidation: a request whose body nobody read proved the empty body, and the proof was not
 *   accepted before (replay-guard.ts). Handlers run only after it.
 */
import { HEADER_MERCHANT_ID } from '@dw/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors';
import { bodyDigest, EMPTY_BODY_DIGEST, HEADER_INTERNAL_AUTH, type InternalAuth, type Proof } from './internal-auth';

// Lower-case, as the gateway sends it and as transactions-svc accepts it.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

declare module 'fastify' {
  interface FastifyRequest {
    merchantId: string;
    /** The caller's proof, once its header checked out; null on routes that need none. */
    internalProof: Proof | null;
    /** SHA-256 (hex) of the raw body, set by the JSON parser on a request with a proof. */
    receivedBodyDigest: string | null;
  }
}

const notFromGateway = () =>
  new ApiError(401, 'unauthorized', 'This service answers only requests that come through the API gateway.');

function proofOf(auth: InternalAuth, request: FastifyRequest, merchantId: string): Proof | undefined {
  return auth.check(request.headers[HEADER_INTERNAL_AUTH], {
    method: request.method,
    path: request.raw.url ?? request.url,
    merchantId,
    requestId: String(request.id),
  });
}

/**
 * For the JSON parser, on the raw bytes before it parses them: a request with a proof whose body
 * is not the one signed is refused (401, as any other failed proof). One SHA-256 over at most
 * the body limit; nothing for requests without a proof.
 */
export function refuseUnprovenBody(request: FastifyRequest, raw: Buffer): ApiError | undefined {
  const proof = request.internalProof;
  if (!proof) return undefined;
  request.receivedBodyDigest = bodyDigest(raw);
  return request.receivedBodyDigest === proof.bodyDigest ? undefined : notFromGateway();
}

function guard(app: FastifyInstance, auth: InternalAuth, merchantOf: (request: FastifyRequest) => string | undefined): void {
  app.addHook('onRequest', async (request) => {
    const merchantId = merchantOf(request);
    const proof = merchantId === undefined ? undefined : proofOf(auth, request, merchantId);
    if (!proof) throw notFromGateway();
    request.internalProof = proof;
    if (merchantId) request.merchantId = merchantId;
  });
  app.addHook('preValidation', async (request) => {
    const proof = request.internalProof!;
    // No body was read (none sent, or a GET's, which nothing reads): the proof must say so.
    if ((request.receivedBodyDigest ?? EMPTY_BODY_DIGEST) !== proof.bodyDigest) throw notFromGateway();
    if (!auth.replays.firstSighting(proof)) throw notFromGateway();
  });
}

function decorate(app: FastifyInstance): void {
  if (!app.hasRequestDecorator('internalProof')) app.decorateRequest('internalProof', null);
  if (!app.hasRequestDecorator('receivedBodyDigest')) app.decorateRequest('receivedBodyDigest', null);
}

export function requireMerchant(app: FastifyInstance, auth: InternalAuth): void {
  app.decorateRequest('merchantId', '');
  decorate(app);
  guard(app, auth, (request) => {
    const id = request.headers[HEADER_MERCHANT_ID];
    return typeof id === 'string' && UUID.test(id) ? id : undefined;
  });
}

/** For internal routes that act for no merchant (token resolution): the proof alone. */
export function requireInternalCaller(app: FastifyInstance, auth: InternalAuth): void {
  decorate(app);
  guard(app, auth, (request) => (request.headers[HEADER_MERCHANT_ID] === undefined ? '' : undefined));
}
