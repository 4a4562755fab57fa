/**
 * One outbox row as one RabbitMQ message. The body is serialized by the contract's one serializer
 * (`callbackBody`: jsonb reorders keys, so the stored payload cannot be sent as it is), the
 * message id is the event id (what callback-svc sends as `webhook-id`), and the publish is a span
 * of the trace that wrote the row: its traceparent replaces the row's in the message headers.
 */
import { callbackBody, type CallbackEvent } from '@dw/contracts';
import { publishConfirmed } from '@dw/messaging';
import { contextFromHeaders, injectTraceHeaders, withSpan } from '@dw/telemetry';
import { SpanKind } from '@opentelemetry/api';
import type { ConfirmChannel } from 'amqplib';

export interface OutboxRow {
  /** bigint, as pg returns it: a string. */
  id: string;
  event_id: string;
  routing_key: string;
  payload: CallbackEvent;
  headers: Record<string, unknown> | null;
}

export function publishOutboxRow(channel: ConfirmChannel, exchange: string, row: OutboxRow): Promise<void> {
  const stored = row.headers ?? {};
  return withSpan(
    `publish ${exchange}`,
    {
      kind: SpanKind.PRODUCER,
      parent: contextFromHeaders(stored),
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'publish',
        'messaging.operation.name': 'publish',
        'messaging.destination.name': exchange,
        'messaging.rabbitmq.destination.routing_key': row.routing_key,
        'messaging.message.id': row.event_id,
      },
    },
    async () => {
      // The row's headers are the fallback when tracing is off (no propagator: inject writes nothing).
      const headers: Record<string, unknown> = { ...stored };
      injectTraceHeaders(headers);
      await publishConfirmed(channel, exchange, row.routing_key, Buffer.from(callbackBody(row.payload)), {
        contentType: 'application/json',
        messageId: row.event_id,
        headers,
        persistent: true,
        mandatory: true,
      });
    },
  );
}
