/** Operator API (not routed by the gateway): moves a transaction through the state machine. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { HEADER_ADMIN_TOKEN, Problem, StatusChangeBody, Transaction, TransactionIdParams } from '@dw/contracts';
import { ApiError, invalidTransition, notFound } from '@dw/http-kit';
import { currentTraceparent } from '@dw/telemetry';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { changeStatus } from '../domain/transactions-repo';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function operatorRoutes(app: FastifyInstance, db: pg.Pool, adminToken: string | undefined): void {
  const expected = adminToken ? digest(adminToken) : undefined;

  app.post<{ Params: { id: string }; Body: StatusChangeBody }>(
    '/internal/transactions/:id/status',
    {
      schema: { params: TransactionIdParams, body: StatusChangeBody, response: { 200: Transaction, '4xx': Problem } },
      onRequest: async (request) => {
        const sent = request.headers[HEADER_ADMIN_TOKEN];
        // No ADMIN_TOKEN configured: the operator API is closed.
        if (!expected || typeof sent !== 'string' || !timingSafeEqual(digest(sent), expected)) {
          throw new ApiError(401, 'unauthorized', 'Send a valid x-admin-token header.');
        }
      },
    },
    async (request) => {
      const { status, reason } = request.body;
      const outcome = await changeStatus(db, request.params.id, status, reason ?? null, currentTraceparent() ?? null);
      if (outcome.kind === 'not_found') throw notFound('No transaction with this id.');
      if (outcome.kind === 'refused') {
        throw invalidTransition(`A ${outcome.current} transaction cannot move to ${status}.`);
      }
      return outcome.transaction;
    },
  );
}
