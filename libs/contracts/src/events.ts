import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './primitives';
import { Transaction } from './transactions';

/** The body POSTed to a merchant's callback URL: identical on every attempt. */
export const CallbackEvent = Type.Object(
  {
    id: Type.String({ description: '"evt_…"; equals the webhook-id header; the same on every attempt' }),
    type: Type.String({ description: '"deposit.pending", "withdraw.completed", …' }),
    createdAt: Timestamp,
    sequence: Type.Integer({ minimum: 1, description: 'Grows with each event of one transaction' }),
    data: Transaction,
  },
  { additionalProperties: false, $id: 'CallbackEvent' },
);
export type CallbackEvent = Static<typeof CallbackEvent>;
