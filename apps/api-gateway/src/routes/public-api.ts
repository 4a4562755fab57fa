/**
 * The merchant API: validated here against the contract's schemas (which also feed /openapi.json),
 * then forwarded to transactions-svc with the authenticated merchant's id.
 */
import {
  BalanceHistoryPage,
  BalanceHistoryQuery,
  BalanceList,
  CallbackUrls,
  CreateDepositBody,
  CreateWithdrawBody,
  Problem,
  RecoverCallbacksBody,
  RecoveredCallbacks,
  RedeliverCallbackBody,
  RedeliveredEvent,
  RotateCallbackSecretBody,
  RotatedCallbackSecret,
  Transaction,
  UpdateCallbackUrlBody,
} from '@dw/contracts';
import type { FastifyInstance, preValidationHookHandler, RouteShorthandOptions } from 'fastify';
import { forward } from '../forwarding';

const errors = { '4xx': Problem, '5xx': Problem };

function doc(summary: string, schema: Record<string, unknown>): RouteShorthandOptions {
  return { schema: { summary, tags: ['merchant'], ...schema } };
}

/**
 * Operations whose every field is optional: sent with no body at all (`curl -X POST` alone) they
 * read it as `{}`, as Stripe's do, rather than answer 400; /openapi.json marks their body optional.
 * A body declared JSON but empty is still a 400.
 */
export const BODY_MAY_BE_ABSENT: readonly string[] = ['/api/rotateCallbackSecret'];

const absentBodyIsEmpty: preValidationHookHandler = (request, _reply, done) => {
  request.body ??= {};
  done();
};

export function publicApiRoutes(app: FastifyInstance): void {
  app.post(
    '/api/createDeposit',
    doc('Create a deposit (idempotent per orderId)', {
      body: CreateDepositBody,
      response: { 201: Transaction, 200: Transaction, 409: Problem, ...errors },
    }),
    forward,
  );
  app.post(
    '/api/createWithdraw',
    doc('Create a withdraw (idempotent per orderId)', {
      body: CreateWithdrawBody,
      response: { 201: Transaction, 200: Transaction, 409: Problem, 422: Problem, ...errors },
    }),
    forward,
  );
  app.get('/api/getCallbackUrls', doc('Read both callback URLs', { response: { 200: CallbackUrls, ...errors } }), forward);
  app.put(
    '/api/updateCallbackUrlDeposit',
    doc('Set or clear the deposit callback URL', { body: UpdateCallbackUrlBody, response: { 200: CallbackUrls, ...errors } }),
    forward,
  );
  app.put(
    '/api/updateCallbackUrlWithdraw',
    doc('Set or clear the withdraw callback URL', { body: UpdateCallbackUrlBody, response: { 200: CallbackUrls, ...errors } }),
    forward,
  );
  app.post(
    '/api/rotateCallbackSecret',
    {
      ...doc('Roll the callback signing secret; the old one keeps signing beside it for overlapSeconds (default 86400, 0 revokes it)', {
        body: RotateCallbackSecretBody,
        response: { 200: RotatedCallbackSecret, ...errors },
      }),
      preValidation: absentBodyIsEmpty,
    },
    forward,
  );
  app.post(
    '/api/redeliverCallback',
    doc('Start a new series of callback attempts for one settled event (same webhook-id and body); 409 while one is pending or retrying', {
      body: RedeliverCallbackBody,
      response: { 202: RedeliveredEvent, 404: Problem, 409: Problem, ...errors },
    }),
    forward,
  );
  app.post(
    '/api/recoverCallbacks',
    doc('Start a new series for every callback that ended failed or skipped, for events created in [since, until) (at most 14 days back, 10,000 events)', {
      body: RecoverCallbacksBody,
      response: { 202: RecoveredCallbacks, ...errors },
    }),
    forward,
  );
  app.get(
    '/api/getBalance',
    doc('Balances per currency: available (may be spent), held (by withdraws not yet final), incoming (deposits not yet final) and the credit limit', {
      response: { 200: BalanceList, ...errors },
    }),
    forward,
  );
  app.get(
    '/api/getBalanceHistory',
    doc('The statement: ledger entries newest first, each with its signed change and the balance right after it; keyset pages, or every matching entry as CSV with Accept: text/csv (at most 100,000)', {
      querystring: BalanceHistoryQuery,
      response: {
        200: {
          description: 'A page of entries; with Accept: text/csv, every matching entry',
          content: {
            'application/json': { schema: BalanceHistoryPage },
            'text/csv': { schema: { type: 'string', description: 'RFC 4180, header row, one row per matching entry, newest first' } },
          },
        },
        ...errors,
      },
    }),
    forward,
  );
}
