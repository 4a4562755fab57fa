/**
 * Redelivery and bulk recovery (docs/api.md#redelivery-and-recovery): a merchant starts a new series of attempts for one
 * settled delivery, or for every delivery that ended failed or skipped in a window of time.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TransactionType } from './primitives';
import { TransactionEventView } from './view';

/** Recovery reaches at most this far back (events created at or after now minus this). */
export const RECOVERY_MAX_AGE_DAYS = 14;
/** One recovery call starts at most this many series; a window holding more is a 400. */
export const RECOVERY_MAX_EVENTS = 10_000;

export const EventId = Type.String({
  minLength: 5,
  maxLength: 64,
  pattern: '^evt_[A-Za-z0-9]+$',
  description: 'An event id, "evt_…": the callback body\'s id and its webhook-id header',
});

export const RedeliverCallbackBody = Type.Object(
  { eventId: EventId },
  { additionalProperties: false, $id: 'RedeliverCallbackBody' },
);
export type RedeliverCallbackBody = Static<typeof RedeliverCallbackBody>;

/** The 202 of a redelivery: the event with its delivery, as the viewer shows it (pending again). */
export const RedeliveredEvent = Type.Object(TransactionEventView.properties, { additionalProperties: false, $id: 'RedeliveredEvent' });
export type RedeliveredEvent = Static<typeof RedeliveredEvent>;

export const RecoverCallbacksBody = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      description: `events created at or after this time; at most ${RECOVERY_MAX_AGE_DAYS} days ago`,
    }),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'events created before this time (default: now)' })),
    type: Type.Optional(TransactionType),
  },
  { additionalProperties: false, $id: 'RecoverCallbacksBody' },
);
export type RecoverCallbacksBody = Static<typeof RecoverCallbacksBody>;

export const RecoveredCallbacks = Type.Object(
  { recovered: Type.Integer({ minimum: 0, description: 'how many deliveries started a new series' }) },
  { additionalProperties: false, $id: 'RecoveredCallbacks' },
);
export type RecoveredCallbacks = Static<typeof RecoveredCallbacks>;
