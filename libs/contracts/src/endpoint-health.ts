/**
 * Endpoint health (issue 9): per callback URL (deposit, withdraw), how its deliveries of the last
 * 24 hours went. Counted over the events created in that window, at most the newest
 * HEALTH_MAX_EVENTS of them (issue 16), so the read costs the same for a merchant with a million
 * events a day as for one with a thousand; `since` says where the count starts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, TransactionType } from './primitives';

export const HEALTH_WINDOW_HOURS = 24;
/** The most events one health read counts: the newest of the window. */
export const HEALTH_MAX_EVENTS = 1000;

export const EndpointHealthItem = Type.Object(
  {
    type: TransactionType,
    /** The callback URL as it is now; null when none is set (deliveries are then skipped). */
    url: Type.Union([Type.String(), Type.Null()]),
    deliveries: Type.Integer({ minimum: 0, description: 'events of this type created in the window' }),
    succeeded: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0, description: 'all 6 attempts failed' }),
    retrying: Type.Integer({ minimum: 0, description: 'waiting for their next attempt now' }),
    pending: Type.Integer({ minimum: 0, description: 'first attempt not made yet' }),
    skipped: Type.Integer({ minimum: 0, description: 'no URL was set' }),
    successRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description: 'succeeded / (succeeded + failed); null when none has finished',
    }),
    lastSuccessAt: Type.Union([Timestamp, Type.Null()]),
    lastFailure: Type.Union([
      Type.Object(
        { at: Timestamp, statusCode: Type.Union([Type.Integer(), Type.Null()]), error: Type.Union([Type.String(), Type.Null()]) },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

export const EndpointHealth = Type.Object(
  {
    windowHours: Type.Integer(),
    since: Type.String({
      format: 'date-time',
      description: `where the count starts: windowHours ago, or, when the window held more than ${HEALTH_MAX_EVENTS} events, the time of the oldest of the newest ${HEALTH_MAX_EVENTS}`,
    }),
    endpoints: Type.Array(EndpointHealthItem),
  },
  { additionalProperties: false, $id: 'EndpointHealth' },
);
export type EndpointHealth = Static<typeof EndpointHealth>;
export type EndpointHealthItem = Static<typeof EndpointHealthItem>;
