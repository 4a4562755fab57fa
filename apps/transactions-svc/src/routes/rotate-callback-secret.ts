/** POST /api/rotateCallbackSecret: the merchant rolls its own signing secret, with an overlap (docs/api.md#signing-secret). */
import { Problem, RotateCallbackSecretBody, RotatedCallbackSecret, SECRET_OVERLAP_DEFAULT_SECONDS } from '@dw/contracts';
import { notFound } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import { rotateSigningSecret } from '../db/merchant-admin';
import type pg from 'pg';

export function rotateCallbackSecretRoutes(app: FastifyInstance, db: pg.Pool): void {
  app.post<{ Body: RotateCallbackSecretBody }>(
    '/api/rotateCallbackSecret',
    { schema: { body: RotateCallbackSecretBody, response: { 200: RotatedCallbackSecret, '4xx': Problem } } },
    async (request, reply) => {
      const overlap = request.body?.overlapSeconds ?? SECRET_OVERLAP_DEFAULT_SECONDS;
      const issued = await rotateSigningSecret(db, request.merchantId, overlap);
      if (!issued) throw notFound('Merchant not found.');
      // Shown once: no cache may keep it.
      reply.header('cache-control', 'no-store');
      return { callbackSigningSecret: issued.callbackSigningSecret };
    },
  );
}
