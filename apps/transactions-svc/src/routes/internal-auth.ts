/** Token resolution for the gateway: it sends the token's SHA-256, never the token. */
import { Type } from '@sinclair/typebox';
import { notFound } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { merchantIdForTokenHash } from '../domain/merchants-repo';

const Body = Type.Object({ tokenHash: Type.String({ pattern: '^[0-9a-f]{64}$' }) }, { additionalProperties: false });
const Reply = Type.Object({ merchantId: Type.String(), tokenHash: Type.String() });

export function internalAuthRoutes(app: FastifyInstance, db: pg.Pool): void {
  app.post<{ Body: { tokenHash: string } }>(
    '/internal/auth/resolve',
    { schema: { body: Body, response: { 200: Reply } } },
    async (request) => {
      const merchantId = await merchantIdForTokenHash(db, request.body.tokenHash);
      if (!merchantId) throw notFound('Unknown token.');
      return { merchantId, tokenHash: request.body.tokenHash };
    },
  );
}
