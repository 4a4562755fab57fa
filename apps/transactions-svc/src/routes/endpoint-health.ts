/** GET /api/endpoint-health: the merchant's callback endpoints over the last 24 h (for the ui). */
import { EndpointHealth, Problem } from '@dw/contracts';
import { notFound } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import { endpointHealth } from '../domain/endpoint-health';
import type pg from 'pg';

export function endpointHealthRoutes(app: FastifyInstance, db: pg.Pool): void {
  app.get('/api/endpoint-health', { schema: { response: { 200: EndpointHealth, '4xx': Problem } } }, async (request) => {
    const health = await endpointHealth(db, request.merchantId);
    if (!health) throw notFound('No such merchant.');
    return health;
  });
}
