/**
 * POST /api/redeliverCallback and POST /api/recoverCallbacks (docs/api.md#redelivery-and-recovery): the merchant starts a
 * new series of attempts for one settled delivery, or for every failed or skipped one in a window.
 */
import {
  Problem,
  RECOVERY_MAX_AGE_DAYS,
  RECOVERY_MAX_EVENTS,
  RecoverCallbacksBody,
  RecoveredCallbacks,
  RedeliverCallbackBody,
  RedeliveredEvent,
} from '@dw/contracts';
import { conflict, notFound, validationFailed } from '@dw/http-kit';
import { currentTraceparent } from '@dw/telemetry';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_REDELIVERY_MAX_SERIES, recoverDeliveries, redeliverEvent } from '../domain/redelivery';
import type pg from 'pg';
import { isEmptyWindow } from './time-range';

const DAY_MS = 86_400_000;

/** `maxSeries`: REDELIVERY_MAX_SERIES, the series a merchant may start for one event. */
export function redeliverCallbackRoutes(app: FastifyInstance, db: pg.Pool, maxSeries = DEFAULT_REDELIVERY_MAX_SERIES): void {
  app.post<{ Body: RedeliverCallbackBody }>(
    '/api/redeliverCallback',
    { schema: { body: RedeliverCallbackBody, response: { 202: RedeliveredEvent, '4xx': Problem } } },
    async (request, reply) => {
      const outcome = await redeliverEvent(db, request.merchantId, request.body.eventId, currentTraceparent() ?? null, maxSeries);
      // Another merchant's event reads exactly like one that does not exist.
      if (outcome.kind === 'not_found') throw notFound('No event with this id.');
      if (outcome.kind === 'in_progress') {
        throw conflict('A series of attempts for this event is still pending or retrying; redeliver it once it has settled.');
      }
      if (outcome.kind === 'series_cap') {
        throw conflict(`This event has been redelivered ${maxSeries} times, the most one event allows; nothing was started.`);
      }
      return reply.code(202).send(outcome.event);
    },
  );

  app.post<{ Body: RecoverCallbacksBody }>(
    '/api/recoverCallbacks',
    { schema: { body: RecoverCallbacksBody, response: { 202: RecoveredCallbacks, '4xx': Problem } } },
    async (request, reply) => {
      const now = Date.now();
      const { since, type } = request.body;
      const until = request.body.until ?? new Date(now).toISOString();
      // The schema's date-time format admits only real instants; this keeps a NaN from ever passing.
      if (Number.isNaN(Date.parse(since)) || Number.isNaN(Date.parse(until))) {
        throw validationFailed([{ path: Number.isNaN(Date.parse(since)) ? '/since' : '/until', message: 'must be a valid date-time' }]);
      }
      if (Date.parse(since) < now - RECOVERY_MAX_AGE_DAYS * DAY_MS) {
        throw validationFailed(
          [{ path: '/since', message: `must be at most ${RECOVERY_MAX_AGE_DAYS} days ago` }],
          `Recovery reaches at most ${RECOVERY_MAX_AGE_DAYS} days back.`,
        );
      }
      if (isEmptyWindow(since, until)) {
        // Named as sent: without until, the window ends now, so it is since that is wrong.
        throw validationFailed([
          request.body.until === undefined ? { path: '/since', message: 'must be in the past (until, not given, is now)' } : { path: '/until', message: 'must be later than since' },
        ]);
      }
      // An event past its series cap is left as it is (not counted in `recovered`).
      const outcome = await recoverDeliveries(db, request.merchantId, { since, until, type }, currentTraceparent() ?? null, maxSeries);
      if (outcome.kind === 'too_many') {
        throw validationFailed(
          [{ path: '/since', message: `the window holds more than ${RECOVERY_MAX_EVENTS} failed or skipped deliveries; narrow it` }],
          `One call recovers at most ${RECOVERY_MAX_EVENTS} events; nothing was recovered.`,
        );
      }
      return reply.code(202).send({ recovered: outcome.recovered });
    },
  );
}
